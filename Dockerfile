# syntax=docker/dockerfile:1
# packbot container: build stage compiles TypeScript and the native SQLite addon; the runtime
# stage carries production dependencies only and runs as a non-root user under an init.
# Node 24 LTS: the newest LTS line that better-sqlite3 12 (the last major supporting Node 20) supports.
ARG NODE_VERSION=24

FROM node:${NODE_VERSION}-bookworm-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts && npm rebuild better-sqlite3
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY bench ./bench
RUN npm run build && npm prune --omit=dev

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
RUN apt-get update && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY config ./config
COPY strategies ./strategies
COPY schemas ./schemas
RUN mkdir -p /app/data && chown -R node:node /app/data
USER node
VOLUME ["/app/data"]
EXPOSE 9464
# The metrics server must listen on all interfaces inside the container for this to work:
# set metrics.host: 0.0.0.0 in the mounted config.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:9464/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["/usr/bin/tini", "--", "node", "bin/packbot.js"]
CMD ["run", "--config", "config/bot.yaml"]
