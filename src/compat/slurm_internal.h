// Slurm's internal headers, as our C++ plugins include them, for every
// supported release (22.05, 23.11, 24.11, 25.11, 26.05): the one place that
// knows where each header lives in which release and how to read them from
// C++. Include this, then compat/slurm_compat.h; never a Slurm header
// directly.
//
// Slurm's headers are C. Since 23.11, src/common/extra_constraints.h (pulled
// in by node_conf.h, so by nearly everything) has a struct member named
// `operator`, a C++ keyword; while the headers are read, `operator` is
// renamed. The standard headers they use are included first, so the
// renaming never reaches a C++ standard header.
#ifndef VGPU_COMPAT_SLURM_INTERNAL_H_
#define VGPU_COMPAT_SLURM_INTERNAL_H_

#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <new>

#include "compat/slurm_version.h"

extern "C" {
#define operator slurm_operator
#include "config.h"
#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/bitstring.h"
#include "src/common/env.h"
#include "src/common/job_resources.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/pack.h"
#include "src/common/plugin.h"
#include "src/common/read_config.h"
#include "src/common/run_in_daemon.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include VGPU_SLURM_GRES_H
#include VGPU_SLURM_SELECT_H
#include "src/slurmctld/slurmctld.h"
#include "src/slurmd/common/xcpuinfo.h"
#include "src/slurmd/slurmd/slurmd.h"
#undef operator
}

#endif  // VGPU_COMPAT_SLURM_INTERNAL_H_
