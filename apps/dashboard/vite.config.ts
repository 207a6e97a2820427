import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The dashboard is served by the admission API under /ui/ (apps/admission-api/src/dashboard.ts)
// from dist/ui, which `npm run build` writes. Nothing is loaded from elsewhere: no CDN, no fonts.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/ui/',
  resolve: {
    alias: {
      '@quota/domain': fileURLToPath(new URL('../../libs/domain/src/index.ts', import.meta.url)),
      '@quota/api': fileURLToPath(new URL('../../libs/api/src/index.ts', import.meta.url)),
    },
  },
  build: {
    outDir: fileURLToPath(new URL('../../dist/ui', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // One small script and one stylesheet, and the YAML reader as a chunk of its own that only a
    // what-if pasted as YAML fetches; a report of their sizes is printed on every build.
    modulePreload: { polyfill: false },
    reportCompressedSize: true,
    rollupOptions: {
      // The domain's modules only declare things, so what the page does not use can go: it
      // needs the exact quantity parser, not admission.
      treeshake: { moduleSideEffects: (id: string) => !id.includes('/libs/domain/') },
    },
  },
  server: {
    // `npx vite apps/dashboard` during development: the API on its default port answers /v1,
    // and what the sign-in page asks before it has a token.
    proxy: { '/v1': 'http://127.0.0.1:8080', '/ui/session.json': 'http://127.0.0.1:8080' },
  },
});
