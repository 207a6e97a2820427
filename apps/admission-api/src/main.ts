import { loadConfig } from '@quota/config';
import { createAdmissionApi } from './app.js';

const config = loadConfig();
const app = await createAdmissionApi(config);
await app.listen(config.port, config.host);
console.log(`quota-ledger admission-api listening on http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${config.port} (GET /healthz)`);
