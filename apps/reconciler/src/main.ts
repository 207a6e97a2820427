import { loadConfig } from '@quota/config';

// The reconciler has no work yet (see the project's issues); it validates its
// configuration so that a deployment can already wire it up.
loadConfig();
console.log('quota-ledger reconciler: nothing to do yet');
