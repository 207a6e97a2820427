/**
 * The API's physical floor on this machine: a bare Node `http` server that reads each
 * AdmissionReview, parses it (the one JSON.parse any webhook must do, to echo the uid) and
 * answers a precomputed "allowed" response with that uid. No framework, no auth, no database:
 * what is left is Node's HTTP parsing, the parse, one write and the kernel's sockets.
 * Started by bench/lib/floor.ts with the port as its argument; prints "listening" when ready.
 */
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';
import process from 'node:process';

const [head, tail] = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  response: { uid: '\u0000', allowed: true },
}).split('"\\u0000"');
const server = createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const uid = JSON.parse(Buffer.concat(chunks).toString('utf8')).request?.uid ?? '';
    const body = `${head}${JSON.stringify(uid)}${tail}`;
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    response.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.argv[2]), '127.0.0.1', () => process.stdout.write('listening\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
