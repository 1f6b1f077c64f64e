# syntax=docker/dockerfile:1
# verdict: build with the dev dependencies, run with the production ones only (docs/deployment.md).
# BASE is the official Node image by default; any Debian-like image with node >= 20.19, npm and
# useradd works (the test builds one from Debian packages, see test/deploy/container.test.ts).
ARG BASE=node:20-bookworm-slim

FROM ${BASE} AS build
# Compilers for better-sqlite3 when its prebuilt binary cannot be downloaded (no access to GitHub).
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# `npm install` honours the lockfile (`npm ci` insists on lock entries for every platform's Biome binary).
RUN npm install --no-audit --no-fund --ignore-scripts \
 && npm rebuild better-sqlite3 esbuild
COPY . .
RUN npm run build && node scripts/ensure-build.mjs \
 && npm prune --omit=dev --no-audit --no-fund

FROM ${BASE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATABASE_URL=/data/verdict.db \
    VERDICT_FEEDS_DIR=/data/feeds
WORKDIR /app
# A user of its own, never root; /data holds the SQLite database, its secret file and the feeds.
RUN useradd --system --user-group --uid 10001 --home-dir /app --shell /usr/sbin/nologin verdict \
 && mkdir -p /data && chown verdict:verdict /data
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
COPY --from=build /app/scripts ./scripts
USER verdict
VOLUME ["/data"]
EXPOSE 3000
# /livez says only that the event loop turns (on VERDICT_ADMIN_PORT when it is set).
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "const p=process.env.VERDICT_ADMIN_PORT||process.env.PORT;fetch('http://127.0.0.1:'+p+'/livez').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# `npm start`'s two steps (a no-op build check, then the server), with exec so that the server is
# PID 1 and receives SIGTERM itself.
CMD ["sh", "-c", "node scripts/ensure-build.mjs && exec node dist/src/server.js"]
