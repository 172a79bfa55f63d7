#!/bin/bash
# How calibration-data/lab/cpu-per-byte-1core-pinned/ was measured (session 51; lab/README.md).
# One BlueStore OSD, size-1 pool, the monitor, the manager and the OSD on CPU 0 (lab up
# --osd-cpus 0), fio on CPU 1 (validate --fio-cpus 1): the OSD's CPU seconds per client op
# (validate --osd-counters: /proc/PID/stat user + system before and after each point) over
# block sizes 4 KiB to 1 MiB at 4 in flight, reads and writes. Usage: run.sh OUT REP [REP ...];
# ORDER="randwrite randread" reverses the patterns (to balance the machine's drift).
set -u
B=${CEPHPLAN:-cephplan}
OUT=$1; shift
WORK=$(mktemp -d)
port=${PORT0:-7700}
for r in "$@"; do
  D=$WORK/lab-$r
  port=$((port + 200))
  $B lab up --dir "$D" --osds 1 --replicas 1 --port "$port" --osd-cpus 0 || continue
  for pat in ${ORDER:-randread randwrite}; do
    $B validate --scenario "$D/scenario.toml" --ceph-conf "$D/ceph.conf" --pool rbd \
      --fio-cpus 1 --pattern $pat --images 1 --iodepth 4 --vary bs=4k,16k,64k,256k,1M \
      --image-size 1G --runtime 10s --ramp-time 3s --osd-counters --out "$OUT/osd1-$pat-$r"
  done
  $B lab down --dir "$D"
done
