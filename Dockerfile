# syntax=docker/dockerfile:1
# Build stage: full dependencies to compile TypeScript.
FROM node:22-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json openapi.yaml ./
COPY src ./src
COPY scripts/copy-assets.mjs scripts/bundle.mjs scripts/prebuild-spec.mjs scripts/prebuild-validators.mjs ./scripts/
RUN npx tsc -p tsconfig.json && node scripts/copy-assets.mjs && node scripts/bundle.mjs && node scripts/prebuild-spec.mjs && node scripts/prebuild-validators.mjs

# Runtime stage: production dependencies and the compiled dist/ only.
FROM node:22-slim AS runtime
# Bound to every interface of the container; publish it on the host's loopback only
# (docker run -p 127.0.0.1:4010:4010), or set SANDBOX_ADMIN_TOKEN to share it.
ENV NODE_ENV=production \
    SANDBOX_DOCKER=1 \
    SANDBOX_HOST=0.0.0.0 \
    SANDBOX_URL_FILE=/tmp/payments-sandbox.url \
    PORT=4010
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY openapi.yaml ./
COPY scenarios ./scenarios
COPY pacts ./pacts
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 4010
VOLUME /data
# The sandbox writes the URL it listens on to SANDBOX_URL_FILE, so the check follows a --port
# given in CMD (or `docker run IMAGE node dist/bin.js start --port 5000`); PORT before it is ready.
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD ["node", "-e", "let u = 'http://127.0.0.1:' + (process.env.PORT || 4010); try { u = require('fs').readFileSync(process.env.SANDBOX_URL_FILE, 'utf8').trim(); } catch {} fetch(u + '/_sandbox/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/bin.js", "start"]
