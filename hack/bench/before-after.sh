#!/usr/bin/env bash
# Judges a change by kipam's own workloads: runs KipamRoundsBenchmark on a commit before the
# change and on this tree, in turn (before, after, before, after, ...), each run on a control plane
# of its own, and prints the median of every run's rounds side by side with after/before.
#
#   hack/bench/before-after.sh <commit-before> [pairs, default 3]
#
# The before side is a detached worktree of <commit-before> under target/before-after/, given this
# tree's benchmark code (system-tests' bench package), so both sides are measured by the same
# code and only kipam differs. Alternating the runs spreads the machine's noise over both sides.
# Reports: target/before-after/<side>-<n>/kipam-rounds.{txt,tsv}. About 6 minutes a run.
set -euo pipefail

before="${1:?usage: hack/bench/before-after.sh <commit-before> [pairs]}"
pairs="${2:-3}"
root="$(git rev-parse --show-toplevel)"
out="$root/target/before-after"
tree="$out/tree"
mkdir -p "$out"
rm -rf "$out"/before-* "$out"/after-*   # a summary of this invocation's runs only
git -C "$root" worktree prune            # a tree removed with target/ by a clean
rev="$(git -C "$root" rev-parse --verify "$before^{commit}")"
if [ ! -d "$tree" ]; then
  git -C "$root" worktree add --detach "$tree" "$rev" >&2
fi
git -C "$tree" checkout -q --detach "$rev"
bench=system-tests/src/test/java/io/kipam/system/bench
rm -rf "${tree:?}/$bench"
cp -r "$root/$bench" "$tree/$bench"

run() { # side dir report-dir
  (cd "$2" && ./mvnw -B -q -pl system-tests -am verify -Pbenchmark -DskipIT -DskipE2E \
    -Dspotless.check.skip=true -Dit.test=KipamRoundsBenchmark -Dtest='NoSuchTest*' \
    -Dsurefire.failIfNoSpecifiedTests=false -Dfailsafe.failIfNoSpecifiedTests=false \
    -Dkipam.label="$1" -Dkipam.reportDir="$3") > "$3.log" 2>&1 \
    || { echo "the $1 run failed: see $3.log" >&2; exit 1; }
  sed -n '/^median of the rounds/,$p' "$3/kipam-rounds.txt" | sed "s/^/$1: /"
}

for n in $(seq 1 "$pairs"); do
  run before "$tree" "$out/before-$n"
  run after "$root" "$out/after-$n"
done

# Per workload: the median calls/s and p99 over every round of every run of each side.
printf "%-10s %15s %14s %7s %14s %13s %7s %13s %12s %7s\n" workload "calls/s before" after after/ \
  "p99 ms before" after after/ "daemon CPU ms" after after/
cat "$out"/before-*/kipam-rounds.tsv "$out"/after-*/kipam-rounds.tsv | awk -F'\t' '
  function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { key = $2 " " $3; keys[key] = 1; rate[$1, key] = rate[$1, key] " " $5; p99[$1, key] = p99[$1, key] " " $7
    if (NF >= 10) cpu[$1, key] = cpu[$1, key] " " $10 }
  END {
    for (k in keys) {
      rb = median(rate["before", k]); ra = median(rate["after", k])
      pb = median(p99["before", k]); pa = median(p99["after", k])
      cb = median(cpu["before", k]); ca = median(cpu["after", k])
      printf "%-10s %15.1f %14.1f %6.0f%% %14.1f %13.1f %6.0f%% %13.2f %12.2f %6.0f%%\n", k, rb, ra, 100 * ra / rb, pb, pa, 100 * pa / pb, cb, ca, (cb > 0 ? 100 * ca / cb : 0)
    }
  }' | sort
