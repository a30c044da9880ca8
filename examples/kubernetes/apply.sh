#!/usr/bin/env bash
# Apply one of these manifests with the images taken from your registry: every manifest names its image as
# ${MMBATCH_REGISTRY}/mmbatch:full or :light, and this is the one place that sets it. Push the images there first
# (`make docker`, then `docker tag mmbatch:full "$MMBATCH_REGISTRY/mmbatch:full"` and `docker push`, the same for
# light). A bare `mmbatch:full` would make the cluster pull Docker Hub's library/mmbatch, which does not exist.
#
#   export MMBATCH_REGISTRY=registry.example.com/evals       # once
#   examples/kubernetes/apply.sh examples/kubernetes/prepare-job.yaml
#
# Only ${MMBATCH_REGISTRY} is replaced: the shell variables of the containers' scripts ($status, $@) stay as they are.
set -euo pipefail
manifest=${1:?usage: MMBATCH_REGISTRY=REGISTRY apply.sh MANIFEST.yaml [kubectl apply options]}
shift
if [[ -z "${MMBATCH_REGISTRY:-}" ]]; then
    echo "apply.sh: set MMBATCH_REGISTRY to the registry (and path) you pushed the mmbatch images to" >&2
    exit 2
fi
registry=${MMBATCH_REGISTRY%/}
sed "s|\${MMBATCH_REGISTRY}|$registry|g" "$manifest" | kubectl apply -f - "$@"
