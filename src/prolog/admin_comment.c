#include "admin_comment.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat/slurm_public.h"

static int fail(char *err, size_t err_len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, err_len, fmt, ap);
  va_end(ap);
  return -1;
}

static void free_item(void *p) { free(p); }

/* Our own allocations only: Slurm's destroy functions expect xmalloc'ed
 * memory, which malloc'ed memory is not. */
struct query {
  slurmdb_job_cond_t cond;
  void *db;
};

static void init_once(void) {
  static int initialised = 0;
  if (!initialised) {
    slurm_init(NULL);
    initialised = 1;
  }
}

static int query_open(struct query *q, uint32_t job_id, const char *cluster, char *err, size_t err_len) {
  slurm_selected_step_t *step;
  uint16_t flags = 0;

  init_once();
  memset(q, 0, sizeof(*q));
  q->cond.db_flags = SLURMDB_JOB_FLAG_NOTSET;
  q->cond.flags = JOBCOND_FLAG_NO_DEFAULT_USAGE | JOBCOND_FLAG_NO_STEP;
  q->cond.step_list = slurm_list_create(free_item);
  step = calloc(1, sizeof(*step));
  if (!step) return fail(err, err_len, "out of memory");
  step->array_task_id = NO_VAL;
  step->het_job_offset = NO_VAL;
  step->step_id.job_id = job_id;
  step->step_id.step_id = NO_VAL;
  step->step_id.step_het_comp = NO_VAL;
  slurm_list_append(q->cond.step_list, step);
  if (cluster && *cluster) {
    q->cond.cluster_list = slurm_list_create(free_item);
    slurm_list_append(q->cond.cluster_list, strdup(cluster));
  }
  q->db = slurmdb_connection_get(&flags);
  if (!q->db) {
    slurm_list_destroy(q->cond.step_list);
    if (q->cond.cluster_list) slurm_list_destroy(q->cond.cluster_list);
    return fail(err, err_len, "cannot reach the accounting database (slurmdbd): %s", slurm_strerror(errno));
  }
  return 0;
}

static void query_close(struct query *q) {
  slurmdb_connection_close(&q->db);
  slurm_list_destroy(q->cond.step_list);
  if (q->cond.cluster_list) slurm_list_destroy(q->cond.cluster_list);
}

int vgpu_admin_comment_get(uint32_t job_id, const char *cluster, char **comment, char *err, size_t err_len) {
  struct query q;
  list_t *jobs;
  slurmdb_job_rec_t *job;
  int rc = 0;

  *comment = NULL;
  if (query_open(&q, job_id, cluster, err, err_len) != 0) return -1;
  jobs = slurmdb_jobs_get(q.db, &q.cond);
  if (!jobs) {
    rc = fail(err, err_len, "cannot read job %u from the accounting database: %s", job_id, slurm_strerror(errno));
  } else {
    list_itr_t *it = slurm_list_iterator_create(jobs);
    job = slurm_list_next(it);
    slurm_list_iterator_destroy(it);
    if (!job) {
      fail(err, err_len, "the accounting database has no job %u (yet)", job_id);
      rc = VGPU_COMMENT_NO_JOB;
    }
    else if (!(*comment = strdup(job->admin_comment ? job->admin_comment : "")))
      rc = fail(err, err_len, "out of memory");
    slurm_list_destroy(jobs);
  }
  query_close(&q);
  return rc;
}

int vgpu_admin_comment_set(uint32_t job_id, const char *cluster, const char *comment, char *err, size_t err_len) {
  struct query q;
  slurmdb_job_rec_t rec;
  list_t *changed;
  int rc = 0;

  if (strpbrk(comment, "'\\"))
    return fail(err, err_len, "the comment holds ' or \\, which the accounting database would not store");
  if (query_open(&q, job_id, cluster, err, err_len) != 0) return -1;
  memset(&rec, 0, sizeof(rec));
  rec.derived_ec = NO_VAL;
  rec.admin_comment = (char *)comment;
  changed = slurmdb_job_modify(q.db, &q.cond, &rec);
  if (!changed && errno != SLURM_NO_CHANGE_IN_DATA) {
    rc = fail(err, err_len, "cannot set the AdminComment of job %u: %s", job_id, slurm_strerror(errno));
  } else if (!changed || slurm_list_count(changed) == 0) {
    fail(err, err_len, "the accounting database has no job %u (yet)", job_id);
    rc = VGPU_COMMENT_NO_JOB;
  }
  if (changed) slurm_list_destroy(changed);
  if (rc == 0) slurmdb_connection_commit(q.db, 1);
  query_close(&q);
  return rc;
}

void vgpu_node_rank(const char *nodelist, const char *node, int *rank, int *count) {
  vgpu_hostlist_t hl;
  int n, found;

  *rank = 0;
  *count = 1;
  if (!nodelist || !*nodelist || !node || !*node) return;
  init_once();
  if (!(hl = slurm_hostlist_create(nodelist))) return;
  n = slurm_hostlist_count(hl);
  *count = n > 0 ? n : 1;
  found = slurm_hostlist_find(hl, node);
  *rank = found > 0 ? found : 0;
  slurm_hostlist_destroy(hl);
}
