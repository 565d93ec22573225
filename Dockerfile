# scim-connector image: `docker build -t scim-connector .`
# Node.js 24 LTS (.nvmrc); CI runs the whole suite on it and on Node.js 20 (.ci/run).
# Runs `node dist/main.js` as a non-root user; PostgreSQL comes from DATABASE_URL (see
# docker-compose.yml and docs/operations.md).

# --- build: all dependencies, TypeScript compiled to dist/ ---
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY migrations ./migrations
RUN npm run build

# --- runtime: production dependencies only, the build output, the CLI shim and the example mapping ---
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    PORT=8080 \
    HOST=0.0.0.0
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin
# Only the annotated example: the demo mapping (config/mapping.yaml) is for `npm start`, and
# NODE_ENV=production refuses to start until MAPPING_FILE names your own, mounted file.
COPY config/mapping.example.yaml ./config/
# NODE_ENV=production: the image never mints or prints a token; it refuses to start without
# SCIM_TOKEN (or a token made with `scim-connector token create`), without SAML ADMIN_TOKEN, and
# METRICS_TOKEN (HOST=0.0.0.0 listens beyond loopback); and without PLATFORM_URL or MAPPING_FILE
# (no embedded emulator, no demo mapping).
RUN ln -s /app/bin/scim-connector.js /usr/local/bin/scim-connector
USER node
EXPOSE 8080
# Every role listens on PORT (a process without `web` serves /healthz, /readyz and /metrics only).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/main.js"]
