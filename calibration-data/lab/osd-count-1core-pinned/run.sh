#!/bin/bash
# How calibration-data/lab/osd-count-1core-pinned/ was measured (session 36; lab/README.md).
# 1, 2 and 4 BlueStore OSDs on one CPU (taskset -c 0, with the monitor and the manager), fio on
# the other CPU (taskset -c 1, through the wrapper below): a one-core OSD node with a separate
# one-core client, on a 2-vCPU machine. Usage: run.sh OUT REP [REP ...]; ORDER="4 2 1" reverses
# the OSD counts (repetition r3 ran that way, to balance the machine's drift).
set -u
B=${CEPHPLAN:-cephplan}
OUT=$1; shift
WORK=$(mktemp -d)
printf '#!/bin/sh\nexec taskset -c 1 fio "$@"\n' > "$WORK/fio-cpu1.sh"
chmod +x "$WORK/fio-cpu1.sh"
port=${PORT0:-7100}
for r in "$@"; do
  for n in ${ORDER:-1 2 4}; do
    D=$WORK/lab-n$n-$r
    port=$((port + 200))
    $B lab up --dir "$D" --osds "$n" --replicas 1 --port "$port" || continue
    for pid in $(python3 -c "import json; print(' '.join(str(d['pid']) for d in json.load(open('$D/lab.json'))['daemons']))"); do
      taskset -a -p -c 0 "$pid" > /dev/null
    done
    # The scenario lab up wrote, with one core for the OSD node and one for the client.
    sed -e 's/^cpu = { arch = "x86_64", cores = 2,/cpu = { arch = "x86_64", cores = 1,/' \
        -e 's/^description = .*/description = "N BlueStore OSDs, mon and mgr pinned to one CPU (taskset -c 0); fio pinned to the other (taskset -c 1): a one-core OSD node with a separate one-core client"/' \
        "$D/scenario.toml" > "$D/scenario-pinned.toml"
    for pat in randwrite randread; do
      $B validate --scenario "$D/scenario-pinned.toml" --ceph-conf "$D/ceph.conf" --pool rbd \
        --fio "$WORK/fio-cpu1.sh" --pattern $pat --bs 4k --images 4 --vary iodepth=1,4,16,64 \
        --image-size 1G --runtime 10s --ramp-time 3s --osd-counters --out "$OUT/osd$n-$pat-$r"
    done
    $B lab down --dir "$D"
  done
done
