import { loadConfig } from '@quota/config';
import { createAdmissionApi } from './app.js';

const config = loadConfig();
const app = await createAdmissionApi(config).catch((error: unknown) => {
  console.error(JSON.stringify({ time: new Date().toISOString(), level: 'fatal', app: 'admission-api', msg: error instanceof Error ? error.message : String(error) }));
  process.exit(2);
});
await app.listen(config.port, config.host);
const scheme = config.tls ? 'https' : 'http';
const shown = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
console.log(JSON.stringify({ time: new Date().toISOString(), level: 'info', app: 'admission-api', msg: 'listening', url: `${scheme}://${shown}:${config.port}`, docs: `${scheme}://${shown}:${config.port}/docs` }));

// Nest's shutdown hooks drain HTTP and close the ledger on SIGTERM/SIGINT; this bounds how
// long that may take, so an orchestrator's grace period is never exceeded silently.
const bounded = (): void => {
  setTimeout(() => {
    console.error(JSON.stringify({ time: new Date().toISOString(), level: 'error', app: 'admission-api', msg: `shutdown took longer than ${config.shutdownTimeoutMs} ms: exiting` }));
    process.exit(1);
  }, config.shutdownTimeoutMs).unref();
};
process.once('SIGTERM', bounded);
process.once('SIGINT', bounded);
// Under the zero-setup supervisor: when it dies (even by SIGKILL) the IPC channel closes and
// this process shuts down too, so a crashed run leaves no orphan holding the port.
if (process.send) {
  process.once('disconnect', () => {
    bounded();
    void app.close().then(() => process.exit(0));
  });
}
