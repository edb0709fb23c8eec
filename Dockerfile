# The arena itself, for league operators (docs/security.md, "The arena's own image").
#   docker build -t arena .
#   docker run --rm -v "$PWD/league:/league" arena tournament run /league/league.toml
# BASE is any Debian-based image: python:3.11-slim by default (pulled from a registry), or a
# mirror, or an image made on this machine with no registry at all (deploy/trial.sh imports a
# debootstrapped Debian as arena-base):
#   docker build --build-arg BASE=arena-base:bookworm -t arena .
# Debian's packages supply what the base lacks: Python 3.11+ and pip if it has none, the
# compiler, util-linux and Node.
# Docker-mode bots need the host's engine: -v /var/run/docker.sock:/var/run/docker.sock
# (root-equivalent on the host; the bots never see it).
ARG BASE=python:3.11-slim
FROM ${BASE}

# cc and the static libc build the bundled C bot (and FROM scratch bot images); util-linux
# gives unshare and setpriv for the process sandbox; nodejs runs the bundled JS bot. A base
# without Python (plain Debian) gets Debian's python3 and pip.
RUN apt-get update \
    && python=; if ! python3 -m pip --version >/dev/null 2>&1; then python="python3 python3-pip"; fi \
    && apt-get install -y --no-install-recommends gcc libc6-dev make util-linux nodejs $python \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/arena
COPY pyproject.toml setup.py MANIFEST.in README.md ./
COPY arena ./arena
COPY protocol ./protocol
COPY bots ./bots
COPY tournaments ./tournaments
COPY docs ./docs
# (--break-system-packages: a no-op on python:3.11-slim, needed on a Debian python base.)
# Installed world-readable under /opt and /usr/local so that process-mode bots, which run
# under unprivileged per-bot uids, can still use the interpreter and the SDK.
RUN python3 -m pip install --no-cache-dir --break-system-packages . \
    && make -C bots/random-c \
    && chmod -R a+rX /opt/arena

ENTRYPOINT ["arena"]
CMD ["--help"]
