# gatekit's simulator as a container image: `gatekit simulate` on every interface of the container, its control API
# behind the control token (the container refuses to start without GATEKIT_CONTROL_TOKEN), PostgreSQL support.
#
#   pip wheel -w wheelhouse -c constraints.txt '.[postgres]'     # gatekit and its dependencies, pinned, as wheels
#   docker build -t gatekit .                                     # offline: installs from wheelhouse/ only
#   docker run --rm -p 8080:8080 -e GATEKIT_CONTROL_TOKEN="$(openssl rand -hex 16)" gatekit --workers 2
#
# BASE: any Debian-like image with python3 (3.11, as the wheelhouse) and its venv module: python:3.11-slim by
# default, or a Debian made with debootstrap and `docker import` (make test-image, where no registry is reachable).
ARG BASE=python:3.11-slim
FROM ${BASE}

# the wheels only, never a package index (.dockerignore sends wheelhouse/ and nothing else)
COPY wheelhouse/ /tmp/wheelhouse/
RUN python3 -m venv /opt/gatekit \
    && /opt/gatekit/bin/pip install --disable-pip-version-check --no-cache-dir --no-index \
        --find-links /tmp/wheelhouse 'gatekit[postgres]' \
    && rm -rf /tmp/wheelhouse \
    && useradd --create-home --uid 10001 --user-group gatekit

USER gatekit
WORKDIR /home/gatekit
ENV PATH=/opt/gatekit/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    GATEKIT_PORT=8080
EXPOSE 8080

# /_sim/health answers with the control token (every /_sim/ call needs it once the simulator has one)
HEALTHCHECK --interval=5s --timeout=3s --start-period=10s --retries=3 CMD ["python3", "-c", "import os, urllib.request as r; r.urlopen(r.Request(f\"http://127.0.0.1:{os.environ['GATEKIT_PORT']}/_sim/health\", headers={'Authorization': 'Bearer ' + os.environ['GATEKIT_CONTROL_TOKEN']}), timeout=2)"]

# The arguments of `docker run IMAGE ...` (or compose's `command:`) go to gatekit simulate: --workers, --db,
# --public-url, --callback-host, --config...; the port is GATEKIT_PORT (the health check reads it too).
ENTRYPOINT ["/bin/sh", "-c", "if [ -z \"$GATEKIT_CONTROL_TOKEN\" ]; then echo 'gatekit image: set GATEKIT_CONTROL_TOKEN (16 characters or more): the simulator listens on every interface of the container, and its control API then asks for the token' >&2; exit 2; fi; exec gatekit simulate --host 0.0.0.0 --port \"$GATEKIT_PORT\" \"$@\"", "gatekit-simulate"]
