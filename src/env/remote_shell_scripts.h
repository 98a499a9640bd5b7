// The bash scripts a session runs on a machine whose processes this one cannot signal directly
// (over ssh, inside a container through docker exec): the session's private state directory,
// the foreground run that reports its new cwd on stderr, killing a run, background jobs and the
// cleanup. Each is run as `bash --noprofile --norc -c <script> talaria <args...>`; the comment
// above each says what its arguments are. Written for bash on any Linux with /proc; they use
// `ps` when there is one (procps or busybox), builtins otherwise.
// Thread-safety: constants.
#pragma once

#include <string_view>

namespace talaria::env {

// $1 initial directory (empty: the login directory). Prints the ready line, the new private
// state directory and the absolute starting directory.
// The state directory goes to shared memory when the host has some (see shell_session.cpp: on
// ext4 every rewrite of a state file costs a forced write-out).
inline constexpr std::string_view kInitScript = R"sh(umask 077
__t_base=${TMPDIR:-/tmp}
if [ -d /dev/shm ] && [ -w /dev/shm ]; then __t_base=/dev/shm; fi
__t_dir=$(mktemp -d "$__t_base/talaria-ssh.XXXXXXXXXX") || exit 90
if [ -n "$1" ] && ! cd -- "$1" 2>/dev/null; then
  rmdir -- "$__t_dir"; printf 'no such directory: %s\n' "$1" >&2; exit 91
fi
printf 'talaria-ssh-ready\n%s\n%s\n' "$__t_dir" "$(pwd -P)"
)sh";
inline constexpr int kExitNoStateDir = 90;
inline constexpr int kExitNoInitialDir = 91;

// $1 state directory, $2 run id, $3 cwd marker, $4 directory to start in, $5 the command, $6 "1"
// when $4 is a one-off directory (the command's workdir): the cwd is saved only when the
// command moved away from it (see shell_session.cpp).
// The command runs as a job in its own process group ($__t_job), so the wrapper can tell when
// something the command started outlives it. Like RunProcess locally, what still holds the
// output 200 ms after the command ended is killed with the command's group (over ssh it would
// keep the channel, and so this Run, open until it exits). TERM is passed on to the job.
// A missing start directory falls back to its nearest existing ancestor (as locally). State is
// written with builtins only, no `mv` per command (the trade-off of shell_session.cpp).
inline constexpr std::string_view kRunScript =
    R"sh(__t_dir=$1 __t_id=$2 __t_mark=$3 __t_cwd=$4 __t_cmd=$5 __t_once=$6; set --
__t_pg=$$ __t_job= __t_term=
if read -r _ _ _ _ __t_g _ 2>/dev/null < /proc/$$/stat; then __t_pg=$__t_g; fi
trap '__t_term=1; if [ -n "$__t_job" ]; then kill -TERM -- "-$__t_job" 2>/dev/null; fi' TERM
printf '%s %s\n' "$__t_id" "$__t_pg" > "$__t_dir/run.pgid"
__t_cx=; read -r __t_cx 2>/dev/null < "$__t_dir/cancel"
if [ "$__t_cx" = "$__t_id" ] || [ -n "$__t_term" ]; then exit 130; fi
set -m
(
  set +m
  unset __t_pg __t_g __t_cx __t_job __t_term
  if [ -r "$__t_dir/env" ]; then . "$__t_dir/env" >/dev/null 2>&1; fi
  __t_on_exit() {
    __t_status=$?
    export -n PWD OLDPWD SHLVL _ 2>/dev/null
    export -p > "$__t_dir/env" 2>/dev/null
    if [ "$__t_once" != 1 ] || ! [ . -ef "$__t_here" ]; then pwd -P > "$__t_dir/cwd" 2>/dev/null; fi
    exit $__t_status
  }
  trap __t_on_exit EXIT
  until cd -- "${__t_cwd:-/}" 2>/dev/null; do
    [ -n "$__t_cwd" ] || break
    __t_cwd=${__t_cwd%/*}
  done
  __t_here=$PWD
  unset __t_cwd __t_id __t_mark
  eval "$__t_cmd"
) 2>&1 0<&0 &
__t_job=$!
set +m
printf '%s %s %s\n' "$__t_id" "$__t_pg" "$__t_job" > "$__t_dir/run.pgid"
read -r __t_cx 2>/dev/null < "$__t_dir/cancel"
if [ "$__t_cx" = "$__t_id" ] || [ -n "$__t_term" ]; then kill -TERM -- "-$__t_job" 2>/dev/null; fi
while :; do
  wait "$__t_job"; __t_status=$?
  kill -0 "$__t_job" 2>/dev/null || break
done
if kill -0 -- "-$__t_job" 2>/dev/null; then
  __t_i=0
  while :; do
    __t_h=
    for __t_p in /proc/[0-9]*; do
      [ "$__t_p" = "/proc/$$" ] && continue
      if [ "$__t_p/fd/1" -ef /proc/$$/fd/1 ] || [ "$__t_p/fd/2" -ef /proc/$$/fd/1 ]; then
        __t_h="$__t_h ${__t_p#/proc/}"
      fi
    done
    [ -n "$__t_h" ] || break
    if [ "$__t_i" -ge 4 ]; then kill -KILL -- "-$__t_job" $__t_h 2>/dev/null; break; fi
    sleep 0.05; __t_i=$((__t_i + 1))
  done
fi
__t_c=; read -r __t_c 2>/dev/null < "$__t_dir/cwd"
printf '%s%s\n' "$__t_mark" "$__t_c" >&2
exit $__t_status
)sh";

// $1 state directory, $2 run id: ends that run's process groups, the wrapper's and the
// command's (TERM, up to 2 s, KILL). The "cancel" note stops a run whose wrapper has not yet
// recorded its groups: the wrapper records and then reads the note, this script writes the
// note and then reads the record.
// Liveness ignores zombies: members orphaned by the group's death wait for init to reap them,
// which some container inits do slowly, and `kill -0` counts them.
inline constexpr std::string_view kKillScript = R"sh(__t_dir=$1 __t_id=$2
printf '%s\n' "$__t_id" > "$__t_dir/cancel"
read -r __t_rid __t_pg __t_job 2>/dev/null < "$__t_dir/run.pgid" || exit 0
[ "$__t_rid" = "$__t_id" ] && [ -n "$__t_pg" ] || exit 0
__t_groups="$__t_pg${__t_job:+ $__t_job}"
__t_live() {
  if command -v ps >/dev/null 2>&1; then
    ps -A -o pgid= -o stat= 2>/dev/null | awk -v g="$__t_groups" '
      BEGIN { n = split(g, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
      ($1 in want) && $2 !~ /^Z/ { f = 1 }
      END { exit !f }'
  else
    for __t_g in $__t_groups; do kill -0 -- "-$__t_g" 2>/dev/null && return 0; done
    return 1
  fi
}
for __t_g in $__t_groups; do kill -TERM -- "-$__t_g" 2>/dev/null; done
for __t_i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
  __t_live || exit 0
  sleep 0.1
done
for __t_g in $__t_groups; do kill -KILL -- "-$__t_g" 2>/dev/null; done
exit 0
)sh";

// $1 state directory, $2 job id, $3 directory to start in, $4 the command. Not persisted; the
// group is recorded so the session's end can stop it.
inline constexpr std::string_view kStartScript =
    R"sh(__t_dir=$1 __t_id=$2 __t_cwd=$3 __t_cmd=$4; set --
exec 2>&1
__t_pg=$$
if read -r _ _ _ _ __t_g _ 2>/dev/null < /proc/$$/stat; then __t_pg=$__t_g; fi
printf '%s\n' "$__t_pg" > "$__t_dir/bg-$__t_id.pgid"
trap 'rm -f -- "$__t_dir/bg-$__t_id.pgid"' EXIT
if [ -r "$__t_dir/env" ]; then . "$__t_dir/env" >/dev/null 2>&1; fi
until cd -- "${__t_cwd:-/}" 2>/dev/null; do
  [ -n "$__t_cwd" ] || break
  __t_cwd=${__t_cwd%/*}
done
unset __t_pg __t_g __t_cwd
eval "$__t_cmd"
)sh";

// $1 state directory: stops the session's background jobs and removes the directory.
inline constexpr std::string_view kCleanupScript = R"sh(for __t_f in "$1"/bg-*.pgid; do
  if read -r __t_pg 2>/dev/null < "$__t_f" && [ -n "$__t_pg" ]; then kill -TERM -- "-$__t_pg" 2>/dev/null; fi
done
rm -rf -- "$1"
)sh";

}  // namespace talaria::env
