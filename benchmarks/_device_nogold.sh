#!/bin/bash
# The no-gold trials of benchmarks/annotator_real.py, one process per trial, 16 at a time (a lent
# machine's 16 cores); each trial's CSV goes to $OUT. Usage: bash benchmarks/_device_nogold.sh SEEDS...
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 PYTENSOR_FLAGS=compile__timeout=3600
python3 -c "import pymc, bayeval; print('pymc', pymc.__version__)" || exit 1
for s in "$@"; do for d in duck rte temp; do for r in 7 3 1; do echo "$d $r $s"; done; done; done |
  timeout "${TRIAL_BUDGET:-500}" xargs -P 16 -L 1 bash -c 'python3 benchmarks/annotator_real.py --nogold --datasets $0 --refs $1 --first-seed $2 --max-trials 1 --budget 100000 --cores 1 --out $OUT/t_$0_$1_$2 > $OUT/log_$0_$1_$2.txt 2>&1; echo "done $0 $1 $2 $?"'
cd $OUT && python3 -c "
import glob, pandas as pd
fs = sorted(glob.glob('t_*.csv')); pd.concat([pd.read_csv(f) for f in fs]).to_csv('trials.csv', index=False); print(len(fs), 'trials')"
tail -3 log_duck_7_0.txt; rm -f t_*.md t_*.csv; tar czf logs.tgz log_*.txt && rm log_*.txt
