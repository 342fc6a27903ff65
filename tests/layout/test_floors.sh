#!/usr/bin/env bash
# scripts/check-floors.py: the source tree passes, and a made-up tree with one crossing of each kind (and one
# project include not written from the include root) fails with a line naming each (so the check cannot pass by
# checking nothing).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
check="/usr/bin/python3 $here/scripts/check-floors.py"
$check --root "$here"

tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree"/core/{protocol,trainer,supervisor,runs} "$tree"/ui/charts "$tree"/cli
echo '#pragma once' > "$tree/core/supervisor/job_spec.h"
echo '#pragma once' > "$tree/core/trainer/config.h"
printf '#include <QString>\n' > "$tree/core/trainer/uses_qt.cpp"
printf '#include <QWidget>\n' > "$tree/core/supervisor/uses_widgets.cpp"
printf '#include <torch/torch.h>\n' > "$tree/ui/charts/uses_torch.cpp"
printf '#include "supervisor/job_spec.h"\n' > "$tree/core/runs/uses_supervisor.cpp"
printf '#include "trainer/config.h"\n' > "$tree/cli/uses_trainer.cpp"
mkdir -p "$tree/ui/form"
echo '#pragma once' > "$tree/ui/form/job_form.h"
printf '#include "ui/form/job_form.h"\n' > "$tree/ui/charts/uses_the_form.cpp"
printf '#include "job_spec.h"\n' > "$tree/core/supervisor/unrooted.cpp"
printf '#include "supervisor/job_spec.h"\n#include <QString>\n#include "tst_fine.moc"\n' > "$tree/ui/charts/fine.cpp"
set +e
out=$($check --root "$tree")
status=$?
set -e
echo "$out"
[ "$status" = 1 ] || { echo "FAIL: exit $status, expected 1"; exit 1; }
for expected in 'core/trainer/uses_qt.cpp:1: <QString> is Qt' \
                'core/supervisor/uses_widgets.cpp:1: <QWidget> is Qt widgets' \
                'ui/charts/uses_torch.cpp:1: <torch/torch.h> is LibTorch' \
                'core/runs/uses_supervisor.cpp:1: "supervisor/job_spec.h" is in core/supervisor, which core/runs may not include' \
                'cli/uses_trainer.cpp:1: "trainer/config.h" is in core/trainer, which cli may not include' \
                'ui/charts/uses_the_form.cpp:1: "ui/form/job_form.h" is in ui, which ui/charts may not include' \
                'core/supervisor/unrooted.cpp:1: "job_spec.h" is a project file: write it from the include root, as "supervisor/job_spec.h"' \
                'check-floors: 7 include(s)'; do
  grep -qF "$expected" <<< "$out" || { echo "FAIL: missing: $expected"; exit 1; }
done
if grep -q 'fine.cpp' <<< "$out"; then echo "FAIL: a permitted include was reported"; exit 1; fi
echo "PASS"
