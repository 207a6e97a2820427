# syntax=docker/dockerfile:1
# One image for the three apps, on Node 24 LTS. The default command is the admission API; run
# the others with
#   docker run IMAGE node dist/apps/projection-worker/src/main.js
#   docker run IMAGE node dist/apps/reconciler/src/main.js
# the schema migration (once per deploy, before the API starts) with
#   docker run IMAGE node dist/apps/admission-api/src/migrate.js
# and the CLI (a single file, no dependencies) with
#   docker run IMAGE node dist/quotactl/kubectl-quota webhook-config …
# test/architecture/dockerfile.test.ts checks this file: it builds what the build stage copies in
# a scratch directory and runs the commands above against the output.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Exactly the lockfile, which locks every platform's optional packages (npm ci refuses a
# lockfile that disagrees with package.json, so an image never builds from a drifted one).
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json LICENSE ./
COPY apps ./apps
COPY libs ./libs
COPY migrations ./migrations
# Then only the production dependencies: no swc, esbuild, Vite, Vitest, ESLint, no embedded
# PostgreSQL (a devDependency: only `npm start` runs it; the image is given DATABASE_URL), and no
# TypeScript, which --omit=dev alone keeps (an optional peer of @nestjs/swagger, "devOptional" in
# the lockfile). --omit=optional also drops msgpackr-extract, whose absence msgpackr (BullMQ)
# covers with its JavaScript decoder, and pg-cloudflare, which only Cloudflare Workers load.
RUN npm run build \
 && npm prune --omit=dev --omit=optional --no-audit --no-fund

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    PORT=8080 \
    HOST=0.0.0.0
WORKDIR /app
# Owned by root and read-only to the app: a compromised process cannot rewrite its own code.
# The compiled output only: no sources, no tsconfig, no tests.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The image's own non-root user (uid 1000); numeric so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080
# Plain HTTP only: with TLS configured (Kubernetes) the probes in the manifests take over,
# and the workers, which serve /healthz on METRICS_PORT, override or disable this check.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "--max-old-space-size=256", "--max-semi-space-size=8", "dist/apps/admission-api/src/main.js"]
