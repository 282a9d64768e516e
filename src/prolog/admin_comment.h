/* A job's AdminComment in the accounting database, read and set through
 * Slurm's own slurmdb API (over slurmdbd). Not sacctmgr: it
 * lower-cases the text and turns quotes into backquotes (strip_quotes() in
 * src/sacctmgr/common.c), which would ruin JSON. Not scontrol: slurmctld
 * refuses to update a job that has ended (ESLURM_JOB_FINISHED), and the
 * epilog runs after the end. libslurm reads slurm.conf from SLURM_CONF, as
 * Prolog and Epilog get it. (Not slurm_load_job either, for anything: it
 * loads the cluster's select plugin, which a libslurm program cannot when
 * that plugin needs slurmctld's symbols, as select/cons_tres_pool does.)
 *
 * C, because the slurmdb structures are C; no exceptions can cross. Each
 * call connects as the calling user (root, an accounting administrator, in
 * the epilog) and returns 0, or with a one-line reason in `err`:
 * VGPU_COMMENT_NO_JOB when the database does not have the job (yet: its
 * record comes through slurmctld's queue), -1 for anything else. */
#ifndef VGPU_PROLOG_ADMIN_COMMENT_H_
#define VGPU_PROLOG_ADMIN_COMMENT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VGPU_COMMENT_NO_JOB (-2)

/* *comment: malloc'ed copy of the job's AdminComment ("" when none); the
 * caller frees it. */
int vgpu_admin_comment_get(uint32_t job_id, const char *cluster, char **comment, char *err, size_t err_len);

/* Replaces the job's AdminComment. The text may not hold ' or \ (the
 * database layer does not escape them). */
int vgpu_admin_comment_set(uint32_t job_id, const char *cluster, const char *comment, char *err, size_t err_len);

/* This node's place in the job's node list (SLURM_NODELIST, Slurm's
 * hostlist syntax): *rank = its index (0 when not found), *count = the
 * number of nodes (1 when the list is missing or unreadable). The nodes of
 * a job take turns writing their usage into its one comment by rank. */
void vgpu_node_rank(const char *nodelist, const char *node, int *rank, int *count);

#ifdef __cplusplus
}
#endif

#endif /* VGPU_PROLOG_ADMIN_COMMENT_H_ */
