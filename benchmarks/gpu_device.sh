#!/usr/bin/env bash
# The live figures of the GPU in hand against its driver (issue 24): run on a GPU machine,
#   bash benchmarks/gpu_device.sh            (PYTHON=/path/to/python to choose the interpreter)
# 1. gemmlab doctor (one line per check);
# 2. the GPU tests of gemmlab.gpuspec: attributes against numba's, and for every rung of the
#    ladder the model of blocks per SM on this GPU's limits against the driver's occupancy
#    calculator;
# 3. benchmarks/gpu_occupancy.py: the sweep of shared memory x threads, model against driver, the
#    largest block launched, the course's table for this compute capability against the driver;
# 4. the driver's description of the GPU, written to benchmarks/gpu_device_<name>.json (its L2
#    confirms or corrects the table's, e.g. the H200's).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
export GEMMLAB_BACKEND=gpu
$PY -m gemmlab doctor
$PY -m pytest tests/test_gpuspec.py -n 0 -q -p no:randomly -p no:cacheprovider
$PY benchmarks/gpu_occupancy.py --out benchmarks/gpu_occupancy.json > /dev/null
echo "gpu_occupancy.py: model, driver and table agree"
$PY - <<'PYEOF'
import dataclasses, json, re
import gemmlab as gl
spec = gl.device.spec()
chip = spec.datasheet
record = {"machine": gl.measure.machine(), "attributes": dataclasses.asdict(spec),
          "peak_fp32_tflops": spec.peak_fp32 / 1e12,
          "datasheet": chip.name if chip else None,
          "datasheet_l2_bytes": chip.l2.value if chip and chip.l2 else None,
          "sizes": gl.device.sizes()}
name = re.sub(r"[^a-z0-9]+", "_", spec.name.lower()).strip("_")
path = f"benchmarks/gpu_device_{name}.json"
with open(path, "w") as f:
    json.dump(record, f, indent=1, default=str)
print("\n".join(spec.describe()))
print(f"wrote {path}; L2: driver {spec.l2_bytes}, table {record['datasheet_l2_bytes']}")
PYEOF
