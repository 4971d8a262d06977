# syntax=docker/dockerfile:1
# The operator image: Node 24 and the bundled command (dist/: no node_modules at run time),
# non-root, fits a read-only root filesystem. BASE is a build argument so the image can be
# built from a local base offline.
ARG BASE=node:24-bookworm-slim

FROM ${BASE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY scripts/build.ts ./scripts/
COPY src ./src
# The commit, for linode_operator_build_info (the build context has no .git).
ARG REVISION=unknown
RUN LINODE_OPERATOR_COMMIT=${REVISION} npm run build

FROM ${BASE}
# What the image is (OCI annotations; the release passes the version, commit and time).
ARG VERSION=dev
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="linode-operator" \
      org.opencontainers.image.description="Kubernetes operator for Linode (Akamai Cloud) managed databases, their snapshots and NodeBalancers" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/dist ./dist
COPY package.json LICENSE ./
COPY crds ./crds
# `kubectl exec deploy/linode-operator -- linode-operator doctor` (or status), as on a laptop.
RUN ln -s /app/dist/cli/main.js /usr/local/bin/linode-operator
# Node handles SIGTERM itself (graceful shutdown, lease release): no init process needed. The
# command starts through its own #! line, so the image runs node with the options the npm bin
# gets (src/cli/main.ts says which and why).
USER 1000:1000
EXPOSE 8080 8081
ENTRYPOINT ["/app/dist/cli/main.js"]
CMD ["run"]
