#!/usr/bin/env bash
# A stand-in for `apptainer` (not packaged for Debian 12) implementing exactly what talaria's
# Apptainer environment uses, on top of bubblewrap, and refusing everything else (exit 2, with
# the offending argument), so a test of the backend also checks the argv it sends:
#   version
#   build <new.sif> docker://<image>             writes a marker file (nothing is pulled)
#   instance start --containall --no-home (--writable-tmpfs | --overlay <dir>)
#                  [--bind <src>:<dst>[:ro]]... [--memory <N>M] [--cpus <N>] <image> <name>
#   exec instance://<name> <program> [args...]
#   instance stop <name>
# An instance is a bwrap process in a session of its own: this machine's root read-only, the
# binds, a private /tmp (the writable tmpfs) and /dev, new PID and IPC namespaces, a clean
# environment (--containall). exec enters its namespaces with nsenter. Needs root (nsenter).
# State: $TALARIA_APPTAINER_STANDIN_STATE (default /tmp/talaria-apptainer-standin): <name>.pid,
# <name>.argv (the start command, one argument per line, for tests to read), builds.log (one
# line per build).
set -u
state=${TALARIA_APPTAINER_STANDIN_STATE:-/tmp/talaria-apptainer-standin}
mkdir -p "$state"

refuse() { echo "apptainer-standin: $*" >&2; exit 2; }

instance_pid() {  # the instance's bwrap, if it still runs
  local pid
  read -r pid 2>/dev/null < "$state/$1.pid" || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

case "${1:-}" in
  version)
    [ $# -eq 1 ] || refuse "version takes no arguments"
    echo "apptainer version 1.3.4-talaria-standin"
    ;;
  build)
    [ $# -eq 3 ] || refuse "build wants <sif> <source>"
    case "$3" in docker://?*) ;; *) refuse "build source is not docker://: $3" ;; esac
    printf '%s\n' "$3" >> "$state/builds.log"
    sleep 0.3  # long enough for a second session to find the build under way
    printf 'talaria-standin-sif %s\n' "$3" > "$2" || exit 1
    ;;
  instance)
    case "${2:-}" in
      start)
        shift 2
        argv=("instance" "start" "$@")
        [ "${1:-}" = --containall ] || refuse "instance start without --containall first"
        [ "${2:-}" = --no-home ] || refuse "instance start without --no-home second"
        shift 2
        binds=() writable=
        while [ $# -gt 2 ]; do
          case "$1" in
            --writable-tmpfs) writable=tmpfs; shift ;;
            --overlay) [ -d "${2:-}" ] || refuse "--overlay wants a directory: ${2:-}"; writable=overlay; shift 2 ;;
            --bind)
              IFS=: read -r src dst mode <<< "${2:-}"
              [ -n "$src" ] && [ -n "$dst" ] || refuse "--bind wants src:dst[:ro]: ${2:-}"
              case "$mode" in
                ro) binds+=(--ro-bind "$src" "$dst") ;;
                "") binds+=(--bind "$src" "$dst") ;;
                *) refuse "--bind mode is not ro: $mode" ;;
              esac
              shift 2 ;;
            --memory) [[ "${2:-}" =~ ^[0-9]+M$ ]] || refuse "--memory wants <N>M: ${2:-}"; shift 2 ;;
            --cpus) [[ "${2:-}" =~ ^[0-9]+(\.[0-9]+)?$ ]] || refuse "--cpus wants a number: ${2:-}"; shift 2 ;;
            *) refuse "unexpected instance start argument: $1" ;;
          esac
        done
        [ $# -eq 2 ] || refuse "instance start wants <image> <name> last"
        [ -n "$writable" ] || refuse "instance start without --writable-tmpfs or --overlay"
        image=$1 name=$2
        [[ "$name" =~ ^[A-Za-z0-9_]+$ ]] || refuse "bad instance name: $name"
        case "$image" in
          docker://?*) ;;
          *) grep -q '^talaria-standin-sif ' "$image" 2>/dev/null || refuse "not an image: $image" ;;
        esac
        if instance_pid "$name" >/dev/null; then echo "instance $name already exists" >&2; exit 255; fi
        printf '%s\n' "${argv[@]}" > "$state/$name.argv"
        # Its own session, output to a log: the instance outlives this command and its caller's
        # process group, and holds none of its pipes.
        setsid bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --tmpfs /dev/shm \
          --unshare-pid --unshare-ipc "${binds[@]}" --chdir / \
          sleep infinity > "$state/$name.log" 2>&1 < /dev/null &
        echo $! > "$state/$name.pid"
        # Started when its init (bwrap's child, PID 1 inside) has started the instance's
        # process: its mounts are all in place by then.
        for _ in $(seq 100); do
          child=$(cat "/proc/$!/task/$!/children" 2>/dev/null); child=${child%% *}
          [ -n "$child" ] && [ -n "$(cat "/proc/$child/task/$child/children" 2>/dev/null)" ] && exit 0
          kill -0 $! 2>/dev/null || break
          sleep 0.05
        done
        echo "instance $name did not start: $(cat "$state/$name.log")" >&2
        exit 255
        ;;
      stop)
        [ $# -eq 3 ] || refuse "instance stop wants <name>"
        pid=$(instance_pid "$3") || { echo "no instance $3" >&2; exit 255; }
        kill -KILL -- "-$pid" 2>/dev/null
        rm -f "$state/$3.pid" "$state/$3.log" "$state/$3.argv"
        ;;
      *) refuse "unknown instance subcommand: ${2:-}" ;;
    esac
    ;;
  exec)
    case "${2:-}" in instance://?*) name=${2#instance://} ;; *) refuse "exec target is not instance://: ${2:-}" ;; esac
    [ $# -ge 3 ] || refuse "exec wants a program"
    shift 2
    pid=$(instance_pid "$name") || { echo "FATAL: instance $name not found" >&2; exit 255; }
    init=$(cat "/proc/$pid/task/$pid/children" 2>/dev/null); init=${init%% *}
    [ -n "$init" ] || { echo "FATAL: instance $name has no init" >&2; exit 255; }
    exec nsenter --target "$init" --pid --mount --ipc --wd=/ -- \
      env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
      ${TERM:+TERM=$TERM} "$@"
    ;;
  *) refuse "unknown command: ${1:-}" ;;
esac
