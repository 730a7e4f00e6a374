# Converge in a container: `docker build -t converge .`, then
#   docker run --rm -v "$PWD/infra:/manifests:ro" -e CONVERGE_REGISTRY_ADDR -e CONVERGE_REGISTRY_TOKEN \
#     converge plan -f /manifests
# or the reconcile loop (see examples/kubernetes/). No token, key or manifest is baked in: all of them
# come from the environment or a mounted folder at run time.

# Build: every dependency (TypeScript included), compile, then drop the development ones.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts off: `prepare` would build before the sources are copied.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY schemas ./schemas
COPY examples ./examples
RUN npm run build && npm prune --omit=dev --ignore-scripts

# Run: the compiled code and production dependencies only, as an unprivileged user.
FROM node:20-slim
ENV NODE_ENV=production \
    CONVERGE_STATE_DIR=/var/lib/converge
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/schemas ./schemas
COPY --from=build /app/examples ./examples
RUN ln -s /app/dist/cli/main.js /usr/local/bin/converge \
    && mkdir -p /var/lib/converge \
    && chown node:node /var/lib/converge
# The `node` user of the official image (uid 1000); Kubernetes' runAsNonRoot needs the number.
USER 1000:1000
# `converge reconcile --listen :9464` serves /healthz and /metrics here.
EXPOSE 9464
ENTRYPOINT ["converge"]
CMD ["--help"]
