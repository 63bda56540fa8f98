"""Performance models of the course: hardware peaks, FLOP and traffic counts, the roofline,
parallel time (work/span, messages, Amdahl, pipelines), SM occupancy and an LRU cache simulator.

Everything is reachable as ``gl.perfmodel.<name>``; the sub-modules group the names by topic:
``hardware`` (the one home of hardware facts: the GPU table, what an SM holds, a block's limits,
the memory path from SSD to HBM), ``traffic`` (what is counted), ``roofline`` (the two time
bounds), ``parallelism`` (how work is shared in time), ``occupancy`` (how many blocks share an
SM), ``loader`` (a training loop's prefetch and copy/compute overlap) and ``cache`` (why reuse
depends on capacity).
"""
from .cache import LOOP_ORDERS, CacheResult, LRUCache, Step, gemm_trace, simulate
from .datasheets import DATASHEET, DEVICE_QUERY, MEASURED, Chip
from .hardware import (ARCHITECTURES, DERIVED, DTYPES, HARDWARE, HOPPER, MAX_STATIC_SHARED_BYTES,
                       MAX_THREADS_PER_BLOCK, SPARSE_HALVED, Figure, SMResources, Source, chip,
                       chip_for, fp32_lanes_per_sm, parse_cc, sm_resources, table)
from .hardware import (BOTH_WAYS_HALVED, DEVICE_MEMORY, MEMORY_PATH, POWER, Link,
                       memory_path_table)
from .loader import idle_time, timeline_end, training_timeline
from .occupancy import blocks_per_sm
from .parallelism import (Interval, amdahl, efficiency, group_sum_time, group_sum_timeline,
                          message_time, pipeline_schedule, pipeline_time, reduction_schedule,
                          self_schedule, speedup)
from .roofline import (attainable_flops, effective_bandwidth, intensity, limiting_resource,
                       ridge_point, roofline_time)
from .traffic import (TRAFFIC_MODELS, attention_scores_bytes, fusion_traffic, gemm_flops,
                      gemm_flops_exact, gemm_storage_bytes, gemm_traffic, linear_intensity,
                      tile_workspace_bytes, vector_add_counts)
