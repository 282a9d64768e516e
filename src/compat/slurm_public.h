/* Slurm's public API (slurm.h, slurmdb.h) as the epilog's accounting client
 * (prolog/admin_comment.c, C) uses it, for every supported release: the
 * list and host list types changed names in 23.11 and 24.11. */
#ifndef VGPU_COMPAT_SLURM_PUBLIC_H_
#define VGPU_COMPAT_SLURM_PUBLIC_H_

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>

#include "compat/slurm_version.h"

#if VGPU_SLURM_ERA == 2205
typedef struct xlist list_t;
typedef struct listIterator list_itr_t;
/* A host list handle: a pointer type until 22.05, a struct since 23.11. */
typedef hostlist_t vgpu_hostlist_t;
#else
typedef hostlist_t *vgpu_hostlist_t;
#endif

#endif /* VGPU_COMPAT_SLURM_PUBLIC_H_ */
