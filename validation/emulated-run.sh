#!/usr/bin/env bash
# The emulated cluster of `dtsim validate`: N ranks, each in a network namespace of its own (own hostname), veth pairs
# into a bridge in a switch namespace, tbf shaping at RATE in both directions of every link; OpenMPI over TCP started
# through a namespace-aware launcher. Runs an MPI ping-pong between the first two nodes and one of all N ranks in
# pairs at once, measures how much of a send TCP still buffers when it is complete and how two sends one after the
# other share a link, then runs every (algorithm, size) case, and writes result lines to OUT. Namespaces are torn down on exit, failure or interrupt; every mpirun is
# bounded by a timeout; addresses live only on the veths it creates (10.77.0.0/24), so no traffic leaves them.
# Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN). Facts behind the choices: ../shared/notes/emulated-cluster.md.
#
# usage: emulated-run.sh BIN_DIR N RATE_MBIT REPETITIONS OUT "ALGORITHMS" SIZES...
# DTSIM_TBF_BURST_US: tbf's bucket in microseconds of traffic at RATE (default 1000; smaller buckets lost most of the
# rate on the 2-core VMs of docs/validation.md, session 30)
# OUT lines:  pingpong BYTES SECONDS (2 ranks)   pingpong_all BYTES SECONDS (N ranks in pairs at once)
#             exchange BYTES SECONDS (N ranks in pairs at once, both ways: the time of one exchange)
#             exchange_slowest BYTES SECONDS (the same, the slowest rank's time)
#             sendtime BYTES COMPLETE_S ARRIVED_S (ranks 0 and 1: when a send was complete, when it had arrived)
#             twosends BYTES COMPLETE1_S COMPLETE2_S ARRIVED1_S ARRIVED2_S (rank 0 sends to rank 1, then to rank 2)
#             case ALGORITHM BYTES MEDIAN_S MIN_S ok|WRONG
# PyTorch mode (issue 29), with DTSIM_TORCH_CASES set to lines "MODEL BATCH BUCKET_MB" and ALGORITHMS empty: after the
# microbenchmarks, each rank gets a CPU share of DTSIM_TORCH_SHARE cores (a cgroup's cpu quota), and for every
# (MODEL, BATCH) the compute alone (rank 0, then every rank at once), a profile and, for every bucket size,
# DistributedDataParallel over gloo on all N
# ranks are measured under that share (validation/pytorch/*.py, /usr/bin/python3):
#             torch_share CORES|none          torch_reduce BYTES_PER_S (adding float32 arrays under the share)
#             torch_transport CPU_S WALL_S BYTES_MOVED BYTES_REDUCED WALL_COMPUTING_S COMPUTE_FRACTION (N ranks
#                             allreducing over gloo, alone and while computing, rank 0's process
#                             time: validation/pytorch/transport_cpu.py)
#             torch_compute MODEL BATCH SECONDS (one process, no DDP: the median step)
#             torch_compute_all MODEL BATCH SECONDS (N processes at once, no DDP: rank 0's median step)
#             torch_profile MODEL BATCH FILE (torch.profiler trace marked for dtsim import-profile, in OUT.d/)
#             torch_step MODEL BATCH BUCKET_MB SECONDS COMPUTE_SECONDS T... (N ranks, DDP over gloo: rank 0's median
#                        step, and its median step under no_sync in the same processes, blocks of each in turn: the
#                        compute of every rank at once, communication off, measured next to the step; then every
#                        rank's no_sync step times T, rank by rank; ddp_step.py)
set -euo pipefail
bin=$(cd "$1" && pwd); n=$2; rate=$3; reps=$4; out=$5; algorithms=$6; shift 6; sizes=("$@")
tag="dt$$"
# Leftovers of a run that was killed before its trap could run (SIGKILL) are removed first.
bash "$(dirname "$0")/stale-cleanup.sh" "$$"
work=$(mktemp -d "${TMPDIR:-/tmp}/dtsim-validate-$$-XXXXXX")
made=()

cgroups=()
cleanup() {
  for ns in "${made[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  for cg in "${cgroups[@]}"; do rmdir "$cg" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "${tag}sw"; made+=("${tag}sw")
ip -n "${tag}sw" link add br0 type bridge
ip -n "${tag}sw" link set br0 up
# tbf: a bucket of DTSIM_TBF_BURST_US of traffic (default 1 ms; at least 4 full frames)
burst_us=${DTSIM_TBF_BURST_US:-1000}
burst=$(( rate * burst_us / 8 )); (( burst < 6056 )) && burst=6056
hosts="$work/hosts"
echo "127.0.0.1 localhost" > "$hosts"
for ((i = 0; i < n; i++)); do
  ns="${tag}n$i"
  ip netns add "$ns"; made+=("$ns")
  ip link add "p$i" netns "${tag}sw" type veth peer name eth0 netns "$ns"
  ip -n "${tag}sw" link set "p$i" master br0 up
  ip -n "$ns" addr add "10.77.0.$((i + 1))/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  # Reno, whatever the host's default: under Cubic or BBR the streams of exchanges whose partners change (butterfly,
  # Rabenseifner) share the shaped links unevenly, 5.7 to 9+ s for an exchange the link allows in 5.7 s; under Reno
  # they take 5.70-5.74 s (docs/validation.md, session 7). Reno is always allowed in a new network namespace.
  ip netns exec "$ns" sysctl -q -w net.ipv4.tcp_congestion_control=reno
  tc -n "$ns" qdisc add dev eth0 root tbf rate "${rate}mbit" burst "$burst" latency 50ms
  tc -n "${tag}sw" qdisc add dev "p$i" root tbf rate "${rate}mbit" burst "$burst" latency 50ms
  echo "10.77.0.$((i + 1)) $ns" >> "$hosts"
done

# the launcher OpenMPI calls instead of ssh: run the command in that host's namespace, under its hostname
launcher="$work/launch"
cat > "$launcher" <<LAUNCH
#!/bin/sh
host=\$1; shift
DTSIM_REMOTE="\$*" exec ip netns exec "\$host" unshare --uts --mount --propagation slave \\
  sh -c 'hostname "\$0"; mount --bind "\$1" /etc/hosts; exec sh -c "\$DTSIM_REMOTE"' "\$host" "$hosts"
LAUNCH
chmod +x "$launcher"

mca=(--mca plm_rsh_agent "$launcher" --mca plm_rsh_no_tree_spawn 1 --mca oob_tcp_if_include eth0 --mca pml ob1
     --mca btl tcp,self --mca btl_tcp_if_include eth0 --mca mtl ^ofi --mca mpi_yield_when_idle 1
     --mca btl_tcp_eager_limit 134217728 --mca btl_tcp_rndv_eager_limit 134217728 --mca btl_tcp_max_send_size 134217728
     --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4)
host_list=$(for ((i = 0; i < n; i++)); do printf '%s,' "${tag}n$i"; done); host_list=${host_list%,}

run_mpi() {  # ranks, seconds allowed, program and arguments
  local ranks=$1 limit=$2; shift 2
  local hosts_used; hosts_used=$(echo "$host_list" | cut -d, -f1-"$ranks")
  ip netns exec "${tag}n0" unshare --uts --mount --propagation slave sh -c \
    "hostname ${tag}n0; mount --bind $hosts /etc/hosts; OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
     timeout $limit mpirun --oversubscribe -np $ranks --host $hosts_used ${mca[*]} $*"
}

: > "$out"
pingpong_sizes=(1 64 256 1024 4096 16384 65536 262144 1048576 2097152 4194304 8388608)
run_mpi 2 120 "$bin/dtsim-mpi-pingpong" 5 "${pingpong_sizes[@]}" |
  while read -r bytes seconds; do echo "pingpong $bytes $seconds" >> "$out"; done
# every rank at once, in pairs: what a message costs while all N ranks share this machine's cores
run_mpi "$n" 300 "$bin/dtsim-mpi-pingpong" all 5 "${pingpong_sizes[@]}" |
  while read -r bytes seconds; do echo "pingpong_all $bytes $seconds" >> "$out"; done
# every rank at once, both ways in pairs: N streams through the machine's cores, as a ring's
run_mpi "$n" 300 "$bin/dtsim-mpi-pingpong" exchange 5 "${pingpong_sizes[@]}" |
  while read -r bytes seconds slowest; do
    echo "exchange $bytes $seconds" >> "$out"
    echo "exchange_slowest $bytes $slowest" >> "$out"
  done
# how much of a send TCP still holds when OpenMPI calls it complete (its tail overlaps the rank's next step)
run_mpi 2 300 "$bin/dtsim-mpi-pingpong" sendtime 5 8388608 16777216 |
  while read -r bytes complete arrived; do echo "sendtime $bytes $complete $arrived" >> "$out"; done
# many small messages at once from one rank to another: the per-message gap g (the slope over the counts)
run_mpi 2 300 "$bin/dtsim-mpi-pingpong" msgrate 9 8 16 64 |
  while read -r count seconds; do echo "msgrate $count $seconds" >> "$out"; done
# two sends one after the other from one rank to two: whether the link shares them fairly (a check of the model)
if (( n >= 3 )); then
  run_mpi 3 300 "$bin/dtsim-mpi-pingpong" twosends 5 262144 1048576 4194304 16777216 |
    while read -r bytes c1 c2 a1 a2; do echo "twosends $bytes $c1 $c2 $a1 $a2" >> "$out"; done
fi
if [[ -n ${DTSIM_TORCH_CASES:-} ]]; then
  torch_dir=$(cd "$(dirname "$0")" && pwd)/pytorch
  mkdir -p "$out.d"
  # a cgroup per rank with a cpu quota of DTSIM_TORCH_SHARE cores (cgroup v2 cpu.max, or v1 cpu.cfs_quota_us); where no
  # cpu controller can be written, no share (said in the output)
  share=${DTSIM_TORCH_SHARE:-1}
  # a 10 ms period: with the default 100 ms, a step of tens of milliseconds waits whole periods for its quota
  quota=$(awk -v s="$share" 'BEGIN { printf "%d", s * 10000 }')
  cg_base=""
  if [[ -f /sys/fs/cgroup/cgroup.controllers ]] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
    grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || echo +cpu > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
    grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null && cg_base=/sys/fs/cgroup
  elif [[ -w /sys/fs/cgroup/cpu ]]; then
    cg_base=/sys/fs/cgroup/cpu
  fi
  for ((i = 0; i < n; i++)); do
    cg=""
    if [[ -n $cg_base ]] && mkdir "$cg_base/${tag}r$i" 2>/dev/null; then
      cg="$cg_base/${tag}r$i"; cgroups+=("$cg")
      if [[ -f $cg/cpu.max ]]; then echo "$quota 10000" > "$cg/cpu.max"
      else echo 10000 > "$cg/cpu.cfs_period_us"; echo "$quota" > "$cg/cpu.cfs_quota_us"; fi
    fi
    rank_cg[i]=$cg
  done
  if [[ -n ${rank_cg[0]} ]]; then echo "torch_share $share" >> "$out"; else echo "torch_share none" >> "$out"; fi
  in_rank() {  # rank, seconds allowed, command: run in the rank's namespace and cgroup
    local r=$1 limit=$2; shift 2
    # (joined before entering the namespace: ip netns exec mounts a sysfs of its own, without the cgroup tree)
    CG="${rank_cg[r]}" sh -c '[ -z "$CG" ] || echo $$ > "$CG/cgroup.procs" || exit 1; exec "$@"' sh \
      ip netns exec "${tag}n$r" timeout "$limit" "$@"
  }
  py=/usr/bin/python3
  echo "torch_reduce $(in_rank 0 300 "$py" "$torch_dir/reduce_rate.py")" >> "$out"
  # the processor time gloo's transport takes per byte under the share: every rank allreducing, rank 0's process time
  if (( n > 1 )); then
    pids=()
    for ((r = n - 1; r > 0; r--)); do
      in_rank "$r" 600 env RANK="$r" WORLD_SIZE="$n" MASTER_ADDR=10.77.0.1 MASTER_PORT=29599 GLOO_SOCKET_IFNAME=eth0 \
        "$py" "$torch_dir/transport_cpu.py" > /dev/null &
      pids+=($!)
    done
    transport=$(in_rank 0 600 env RANK=0 WORLD_SIZE="$n" MASTER_ADDR=10.77.0.1 MASTER_PORT=29599 GLOO_SOCKET_IFNAME=eth0 \
      "$py" "$torch_dir/transport_cpu.py")
    for pid in "${pids[@]}"; do wait "$pid"; done
    echo "torch_transport $transport" >> "$out"
  fi
  while read -r model batch; do
    [[ -n $model ]] || continue
    echo "torch_compute $model $batch $(in_rank 0 600 "$py" "$torch_dir/ddp_step.py" "$model" "$batch")" >> "$out"
    # every rank computing at once, communication off (WORLD_SIZE 1: no DDP), each in its cgroup: the contention of N
    # processes for the host's caches and memory, which a share of a core does not hold; rank 0's median
    pids=()
    for ((r = n - 1; r > 0; r--)); do
      in_rank "$r" 600 "$py" "$torch_dir/ddp_step.py" "$model" "$batch" > /dev/null &
      pids+=($!)
    done
    all=$(in_rank 0 600 "$py" "$torch_dir/ddp_step.py" "$model" "$batch")
    for pid in "${pids[@]}"; do wait "$pid"; done
    echo "torch_compute_all $model $batch $all" >> "$out"
    profile="$out.d/profile-$model-$batch.json"
    in_rank 0 600 "$py" "$torch_dir/record_profile.py" "$model" "$batch" "$profile"
    echo "torch_profile $model $batch $profile" >> "$out"
  done < <(awk 'NF == 3 { print $1, $2 }' <<< "$DTSIM_TORCH_CASES" | sort -u)
  port=29600
  while read -r model batch bucket; do
    [[ -n $model ]] || continue
    port=$((port + 1))
    pids=()
    for ((r = n - 1; r >= 0; r--)); do  # rank 0 last, in the foreground: its median is the result
      if ((r > 0)); then
        in_rank "$r" 900 env RANK="$r" WORLD_SIZE="$n" MASTER_ADDR=10.77.0.1 MASTER_PORT="$port" GLOO_SOCKET_IFNAME=eth0 \
          "$py" "$torch_dir/ddp_step.py" "$model" "$batch" --bucket-cap-mb "$bucket" --compute-blocks 2 \
          > "$out.d/no-sync-$r.txt" &
        pids+=($!)
      fi
    done
    seconds=$(in_rank 0 900 env RANK=0 WORLD_SIZE="$n" MASTER_ADDR=10.77.0.1 MASTER_PORT="$port" GLOO_SOCKET_IFNAME=eth0 \
      "$py" "$torch_dir/ddp_step.py" "$model" "$batch" --bucket-cap-mb "$bucket" --compute-blocks 2)
    for pid in "${pids[@]}"; do wait "$pid"; done
    for ((r = 1; r < n; r++)); do seconds="$seconds $(cat "$out.d/no-sync-$r.txt")"; done
    echo "torch_step $model $batch $bucket $seconds" >> "$out"
  done <<< "$DTSIM_TORCH_CASES"
fi
for algorithm in $algorithms; do
  for bytes in "${sizes[@]}"; do
    line=$(run_mpi "$n" 600 "$bin/dtsim-mpi-run" "$algorithm" "$bytes" "$reps" | tail -1)
    echo "case $algorithm $bytes $line" >> "$out"
  done
done
