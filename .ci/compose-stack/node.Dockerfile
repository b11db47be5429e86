# Stand-in for node:20-bookworm-slim (CI only: no image registry here). Debian 12's nodejs is 18, below the
# project's engines, so this copies the CI machine's own Node 20 and npm onto the debootstrapped base, where the
# official image has them (/usr/local), and adds user `node` (uid 1000) as it does. The machine's CA bundle and
# NODE_EXTRA_CA_CERTS let npm reach the registry through this network's TLS proxy (the official image has neither).
FROM debian:bookworm-slim
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && groupadd --gid 1000 node \
 && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \
 && node --version && npm --version
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
CMD ["node"]
