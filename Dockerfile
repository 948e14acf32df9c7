# syntax=docker/dockerfile:1
# The build context is the whole tree less what .dockerignore leaves out, so a new source folder
# (as web/ and scripts/ were) is built without touching this file. CI replays these steps on
# exactly the files they copy and starts what they built (test/deploy/image.test.ts).

# Build: compile TypeScript and the browser board with every dependency.
# npm ci installs a workspace's dependencies (the client's openapi-fetch, which the server and CLI
# compile in) only when that workspace's package.json is there: each is copied before it.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY client/package.json ./client/
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

# Production dependencies only.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY client/package.json ./client/
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production PORT=8080 DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# The agent-board command (package.json "bin", `npx agent-board`): its launcher runs dist/src/cli/main.js here.
COPY bin ./bin
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
# 8080: the API, the board and its sockets. Metrics, when METRICS_PORT is set, on a port of their own.
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
STOPSIGNAL SIGTERM
CMD ["node", "dist/src/main.js"]
