# syntax=docker/dockerfile:1
# One image for the three apps. The default command is the admission API; run the others with
#   docker run IMAGE node dist/apps/projection-worker/src/main.js
#   docker run IMAGE node dist/apps/reconciler/src/main.js
# and the schema migration (once per deploy, before the API starts) with
#   docker run IMAGE node dist/apps/admission-api/src/migrate.js

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# npm install, not npm ci: the lockfile holds the optional native packages of only some
# platforms (@swc/core and msgpackr-extract are locked for Linux alone), and npm ci, which
# accepts nothing but an exact match of lockfile and package.json, fails with it on some
# machines (.ci/run installs the same way). npm install keeps the locked versions and only
# resolves what is missing for this platform.
RUN npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY apps ./apps
COPY libs ./libs
COPY migrations ./migrations
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    PORT=8080 \
    HOST=0.0.0.0
WORKDIR /app
# Owned by root and read-only to the app: a compromised process cannot rewrite its own code.
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
