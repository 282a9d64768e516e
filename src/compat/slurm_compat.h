// Names and small accessors that differ between the supported Slurm
// releases (eras in compat/slurm_version.h), so that the plugins are written
// once, in the newest release's terms. Every version test of the plugins is
// here or in compat/select_ops.h.
#ifndef VGPU_COMPAT_SLURM_COMPAT_H_
#define VGPU_COMPAT_SLURM_COMPAT_H_

#include "compat/slurm_internal.h"

// 22.05 knew these by older names; 23.11 added the new ones.
#if VGPU_SLURM_ERA == 2205
typedef struct xlist list_t;
typedef struct listIterator list_itr_t;
typedef struct job_details job_details_t;
typedef gres_epilog_info_t gres_prep_t;
#endif

// gres/vgpu: the slurmctld-side half of the Prolog/Epilog environment was
// gres_p_epilog_* until 23.02, gres_p_prep_* since.
#if VGPU_SLURM_ERA == 2205
#define VGPU_GRES_PREP_ENTRY(what) gres_p_epilog_##what
#else
#define VGPU_GRES_PREP_ENTRY(what) gres_p_prep_##what
#endif

// gres/vgpu: gres_p_get_job_info and gres_p_get_step_info are part of the
// GRES interface until 23.11 (Slurm refuses a plugin without them), gone in
// 24.11 with the enums they take.
#define VGPU_GRES_HAS_JOB_INFO (VGPU_SLURM_ERA <= 2311)

// gres/vgpu: how slurmctld checks a GRES's Cores= against the node's sockets
// when the node registers (interfaces/gres.c, _check_core_range_matches_sock),
// as the values of vgpu::SocketCheck (devices/socket_alignment.h): 0 not at
// all (22.05, 23.11); 1 each socket all or none (24.11); 2 every core or one
// whole socket (25.11 on). A node that fails it is drained.
#if VGPU_SLURM_ERA <= 2311
#define VGPU_GRES_SOCKET_CHECK 0
#elif VGPU_SLURM_ERA == 2411
#define VGPU_GRES_SOCKET_CHECK 1
#else
#define VGPU_GRES_SOCKET_CHECK 2
#endif

// job_submit/vgpu: job_modify gained `char **err_msg` in 23.02. The
// parameter list of the entry point, and the message pointer (null where
// there is none).
#if VGPU_SLURM_ERA == 2205
#define VGPU_JOB_MODIFY_PARAMS (job_desc_msg_t * job_desc, job_record_t * job, uint32_t submit_uid)
#define VGPU_JOB_MODIFY_ERR_MSG nullptr
#else
#define VGPU_JOB_MODIFY_PARAMS \
  (job_desc_msg_t * job_desc, job_record_t * job, uint32_t submit_uid, char** err_msg)
#define VGPU_JOB_MODIFY_ERR_MSG err_msg
#endif

#endif  // VGPU_COMPAT_SLURM_COMPAT_H_
