# hub: both processes in one container (`hub start`), SQLite in /data by default.
# Set DATABASE_URL=postgresql://… to use PostgreSQL. The image runs in production, which needs
# HUB_MASTER_KEY, HUB_SMTP_URL and a payment rail (HUB_FACILITATOR_URL, HUB_PAYMENT_NETWORK,
# HUB_PAYMENT_TOKEN_ADDRESS): without one, hub refuses to start and says so in one line.

# Build: better-sqlite3 compiles from source when no prebuilt binary matches, so this stage has
# the compilers; it installs exactly the lockfile's runtime packages and generates the Prisma clients.
FROM node:20-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/prisma-generate.js scripts/dashboard-build.js scripts/
COPY prisma prisma
RUN npm ci --omit=dev --no-audit --no-fund

# The dashboard: built with the development packages in a stage of its own; only its files are kept.
FROM node:20-bookworm-slim AS dashboard
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY scripts/dashboard-build.js scripts/
COPY dashboard dashboard
RUN node scripts/dashboard-build.js

# Run: the installed packages and generated clients, no build tools.
FROM node:20-bookworm-slim
WORKDIR /app
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/generated generated
COPY . .
COPY --from=dashboard /app/dashboard/dist dashboard/dist
RUN mkdir -p /data && chown node:node /data

ENV NODE_ENV=production \
    HUB_HOST=0.0.0.0 \
    HUB_DATA_DIR=/data \
    DATABASE_URL=file:/data/hub.db
VOLUME /data
EXPOSE 8400 8402
USER node
HEALTHCHECK --interval=15s --timeout=3s CMD node -e "fetch('http://127.0.0.1:8400/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "bin/hub.js", "start"]
