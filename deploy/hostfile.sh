#!/bin/sh
# Writes a timely hostfile: one host:port per process, in process order.
#
#   neardup-hostfile kubernetes JOB_NAME SERVICE PROCESSES [PORT]   # Indexed Job pods
#   neardup-hostfile hosts PORT HOST...                             # explicit hosts (Slurm)
#
# Kubernetes gives Indexed Job pods the hostname JOB_NAME-INDEX; with the pod's
# `subdomain` set to a headless Service, JOB_NAME-INDEX.SERVICE resolves to pod INDEX.
set -eu
mode=${1:?usage: neardup-hostfile kubernetes|hosts ...}
shift
case "$mode" in
  kubernetes)
    job=${1:?job name}; service=${2:?service name}; processes=${3:?process count}; port=${4:-2101}
    i=0
    while [ "$i" -lt "$processes" ]; do
      echo "$job-$i.$service:$port"
      i=$((i + 1))
    done
    ;;
  hosts)
    port=${1:?port}; shift
    for host in "$@"; do echo "$host:$port"; done
    ;;
  *)
    echo "neardup-hostfile: unknown mode '$mode'" >&2
    exit 2
    ;;
esac
