/* Graphs that allocate device memory, for stubs that include stub_pool.h
 * (CUDA's cuGraphAddMemAllocNode and captured cuMemAllocAsync, HIP's
 * twins). As the drivers document:
 *
 * A graph holds allocation nodes, each with a device, a size and a device
 * address fixed when the node is made (from GRAPH_PTR_BASE, never reused).
 * Instantiating copies the graph's nodes into an executable graph. Launching
 * one takes each node's bytes from its device's graph pool and makes the
 * node's address live; a stream-ordered free of a live address
 * (graph_free) hands the bytes back to the graph pool, which keeps them
 * reserved (a synchronisation does not shrink it) until graph_trim.
 * Launching again while one of its addresses is live is ACCEL_INVALID_VALUE.
 * Uploading one (graph_exec_upload) has its graph pools reserve its bytes
 * without making anything live.
 * Graph pools are pools of stub_pool.h made on first use (one per device).
 *
 * Capture: a stream (an opaque value here) in capture adds a node to the
 * capture's graph for each stream-ordered allocation on it instead of
 * allocating (graph_captured), and kernels launched on it do not run
 * (graph_capturing); ending the capture hands out the graph. Each capture
 * has an id, as the drivers' capture info reports. The drivers' rules for
 * what a capture forbids, which a capture breaks by invalidating it (its
 * end then fails with ACCEL_CAPTURE_INVALIDATED and gives no graph):
 *  - an unsafe call (a synchronisation, a query of an event's status) made
 *    while a capture in global mode (0) is underway in any thread, or one
 *    in thread-local mode (1) in this thread; relaxed (2) forbids nothing:
 *    ACCEL_CAPTURE_UNSUPPORTED (graph_unsafe_call);
 *  - recording an event on the legacy stream (0 or 1) while any capture is
 *    underway: ACCEL_CAPTURE_IMPLICIT;
 *  - an event recorded on a capturing stream is part of the graph: querying
 *    it, waiting for it or timing it is ACCEL_CAPTURE_UNSUPPORTED until it
 *    is recorded again outside a capture (graph_event_record, graph_event_use).
 * The includer defines ACCEL_CAPTURE_UNSUPPORTED, _INVALIDATED, _IMPLICIT.
 *
 * Graph handles are GRAPH_HANDLE_BASE + n, executable graphs
 * EXEC_HANDLE_BASE + n (launching any other handle is for the includer's
 * timed graphs, stub_accel.h). Static: part of its includer's translation
 * unit. Functions return ACCEL_OK or the first failing check. */
#ifndef VGPU_TESTS_STUB_GRAPH_H_
#define VGPU_TESTS_STUB_GRAPH_H_

#include <stdatomic.h>

#include "stub_pool.h"

#define GRAPH_MAX 64
#define GRAPH_NODES 16
#define GRAPH_CAPTURES 8
#define GRAPH_HANDLE_BASE 0xa000
#define EXEC_HANDLE_BASE 0xb000
#define GRAPH_PTR_BASE 0x680000000000ULL

typedef struct {
  int device;
  uint64_t bytes, addr, pool_ptr; /* pool_ptr: while live, its memory */
} stub_graph_node;
typedef struct {
  int alive, nnodes;
  stub_graph_node node[GRAPH_NODES];
} stub_graph;

static pthread_mutex_t g_graph_mu = PTHREAD_MUTEX_INITIALIZER;
static stub_graph g_graphs[GRAPH_MAX], g_execs[GRAPH_MAX];
static int g_ngraphs, g_nexecs;
static uint64_t g_graph_pool[STUB_MAX_DEVICES]; /* pool handle, 0 until made */
static uint64_t g_next_graph_ptr = GRAPH_PTR_BASE;
static struct {
  uint64_t stream, id;
  int graph; /* -1: slot free */
  int mode, invalidated;
  pthread_t thread; /* that began it */
} g_captures[GRAPH_CAPTURES] = {[0 ... GRAPH_CAPTURES - 1] = {0, 0, -1, 0, 0, 0}};
static uint64_t g_next_capture_id = 1;
#define GRAPH_CAPTURED_EVENTS 64
static uint64_t g_captured_events[GRAPH_CAPTURED_EVENTS]; /* 0: free */
/* Set by the first capture of the process: until then every capture check
 * below has its no-capture answer without the lock (a driver's checks are
 * that cheap, and bench/interposer times the interposer, not this stub). */
static atomic_int g_graph_captured_once;

/* Index of live graph `handle` in `table` (of `base`), or -1. g_graph_mu held. */
static int graph_index(stub_graph* table, uint64_t base, uint64_t handle) {
  uint64_t n = handle - base;
  return n < GRAPH_MAX && table[n].alive ? (int)n : -1;
}

static int graph_create(uint64_t* handle) {
  int rc = ACCEL_OUT_OF_MEMORY;
  if (handle == NULL) return ACCEL_INVALID_VALUE;
  pthread_mutex_lock(&g_graph_mu);
  if (g_ngraphs < GRAPH_MAX) {
    g_graphs[g_ngraphs] = (stub_graph){.alive = 1};
    *handle = GRAPH_HANDLE_BASE + (uint64_t)g_ngraphs++;
    rc = ACCEL_OK;
  }
  pthread_mutex_unlock(&g_graph_mu);
  return rc;
}

/* A node of `bytes` on `device` in graph index `n`; g_graph_mu held. */
static int graph_add_locked(int n, int device, uint64_t bytes, uint64_t* addr) {
  stub_graph* g = &g_graphs[n];
  if (bytes == 0 || !accel_valid_device(device)) return ACCEL_INVALID_VALUE;
  if (g->nnodes == GRAPH_NODES) return ACCEL_OUT_OF_MEMORY;
  *addr = g_next_graph_ptr;
  g_next_graph_ptr += (bytes + 255) & ~255ULL;
  g->node[g->nnodes++] = (stub_graph_node){device, bytes, *addr, 0};
  return ACCEL_OK;
}

static int graph_add_alloc(uint64_t graph, int device, uint64_t bytes, uint64_t* addr) {
  int rc = ACCEL_INVALID_VALUE;
  if (addr == NULL) return rc;
  pthread_mutex_lock(&g_graph_mu);
  int n = graph_index(g_graphs, GRAPH_HANDLE_BASE, graph);
  if (n >= 0) rc = graph_add_locked(n, device, bytes, addr);
  pthread_mutex_unlock(&g_graph_mu);
  return rc;
}

/* Graph `from`'s nodes move into graph `into`; `from` is gone. */
static int graph_move_into(uint64_t from, uint64_t into) {
  int rc = ACCEL_INVALID_VALUE;
  pthread_mutex_lock(&g_graph_mu);
  int f = graph_index(g_graphs, GRAPH_HANDLE_BASE, from), t = graph_index(g_graphs, GRAPH_HANDLE_BASE, into);
  if (f >= 0 && t >= 0 && f != t && g_graphs[t].nnodes + g_graphs[f].nnodes > GRAPH_NODES) {
    rc = ACCEL_OUT_OF_MEMORY;
  } else if (f >= 0 && t >= 0 && f != t) {
    for (int i = 0; i < g_graphs[f].nnodes; ++i) g_graphs[t].node[g_graphs[t].nnodes++] = g_graphs[f].node[i];
    g_graphs[f].alive = 0;
    rc = ACCEL_OK;
  }
  pthread_mutex_unlock(&g_graph_mu);
  return rc;
}

/* Graph `from`'s nodes are copied into graph `into` (a clone of `from`
 * becomes a child of `into`); `from` stays. */
static int graph_copy_into(uint64_t from, uint64_t into) {
  int rc = ACCEL_INVALID_VALUE;
  pthread_mutex_lock(&g_graph_mu);
  int f = graph_index(g_graphs, GRAPH_HANDLE_BASE, from), t = graph_index(g_graphs, GRAPH_HANDLE_BASE, into);
  if (f >= 0 && t >= 0 && g_graphs[t].nnodes + g_graphs[f].nnodes > GRAPH_NODES) {
    rc = ACCEL_OUT_OF_MEMORY;
  } else if (f >= 0 && t >= 0) {
    const int n = g_graphs[f].nnodes;
    for (int i = 0; i < n; ++i) {
      stub_graph_node node = g_graphs[f].node[i];
      node.addr = g_next_graph_ptr; /* a copy's allocation is its own */
      g_next_graph_ptr += (node.bytes + 255) & ~255ULL;
      g_graphs[t].node[g_graphs[t].nnodes++] = node;
    }
    rc = ACCEL_OK;
  }
  pthread_mutex_unlock(&g_graph_mu);
  return rc;
}

static int graph_destroy(uint64_t graph) {
  int rc = ACCEL_INVALID_VALUE;
  pthread_mutex_lock(&g_graph_mu);
  int n = graph_index(g_graphs, GRAPH_HANDLE_BASE, graph);
  if (n >= 0) g_graphs[n].alive = 0, rc = ACCEL_OK;
  pthread_mutex_unlock(&g_graph_mu);
  return rc;
}

static int graph_instantiate(uint64_t graph, uint64_t* exec) {
  int rc = ACCEL_INVALID_VALUE;
  if (exec == NULL) return rc;
  pthread_mutex_lock(&g_graph_mu);
  int n = graph_index(g_graphs, GRAPH_HANDLE_BASE, graph);
  if (n >= 0 && g_nexecs == GRAPH_MAX) {
    rc = ACCEL_OUT_OF_MEMORY;
  } else if (n >= 0) {
    g_execs[g_nexecs] = g_graphs[n];
    *exec = EXEC_HANDLE_BASE + (uint64_t)g_nexecs++;
    rc = ACCEL_OK;
  }
  pthread_mutex_unlock(&g_graph_mu);
  return rc;
}

/* Its live memory stays allocated (freed by graph_free), as with the drivers. */
static int graph_exec_destroy(uint64_t exec) {
  int rc = ACCEL_INVALID_VALUE;
  pthread_mutex_lock(&g_graph_mu);
  int n = graph_index(g_execs, EXEC_HANDLE_BASE, exec);
  if (n >= 0) g_execs[n].alive = 0, rc = ACCEL_OK;
  pthread_mutex_unlock(&g_graph_mu);
  return rc;
}

/* Device `device`'s graph pool, made on first use; g_graph_mu held. */
static int graph_pool(int device, uint64_t* pool) {
  if (!accel_valid_device(device)) return ACCEL_INVALID_DEVICE;
  if (g_graph_pool[device] == 0) {
    uint64_t keep_all = UINT64_MAX, handle;
    TRY(pool_create(device, &handle));
    pool_attribute(handle, 4, &keep_all, 1); /* a synchronisation keeps it all */
    g_graph_pool[device] = handle;
  }
  *pool = g_graph_pool[device];
  return ACCEL_OK;
}

/* 1 if `exec` is an executable graph of this header (then *rc is the
 * launch's result), 0 if the includer launches it. */
static int graph_exec_launch(uint64_t exec, int* rc) {
  pthread_mutex_lock(&g_graph_mu);
  int n = graph_index(g_execs, EXEC_HANDLE_BASE, exec);
  if (n >= 0) {
    stub_graph* g = &g_execs[n];
    uint64_t pool;
    *rc = ACCEL_OK;
    for (int i = 0; i < g->nnodes; ++i)
      if (g->node[i].pool_ptr) *rc = ACCEL_INVALID_VALUE;
    for (int i = 0; i < g->nnodes && *rc == ACCEL_OK; ++i) {
      *rc = graph_pool(g->node[i].device, &pool);
      if (*rc == ACCEL_OK) *rc = pool_alloc(pool, g->node[i].bytes, &g->node[i].pool_ptr);
    }
    if (*rc != ACCEL_OK) /* all or nothing */
      for (int i = 0; i < g->nnodes; ++i)
        if (g->node[i].pool_ptr) pool_free(g->node[i].pool_ptr), g->node[i].pool_ptr = 0;
  }
  pthread_mutex_unlock(&g_graph_mu);
  return n >= 0;
}

/* An upload: backs `exec`'s allocations from their devices' graph pools
 * without running it, so that the pools reserve them (and keep them, as
 * after a launch and free) for its launches. 1 if `exec` is an executable
 * graph of this header (then *rc is the upload's result). */
static int graph_exec_upload(uint64_t exec, int* rc) {
  uint64_t pool, ptr[GRAPH_NODES] = {0};
  pthread_mutex_lock(&g_graph_mu);
  int n = graph_index(g_execs, EXEC_HANDLE_BASE, exec);
  if (n >= 0) {
    stub_graph* g = &g_execs[n];
    *rc = ACCEL_OK;
    for (int i = 0; i < g->nnodes && *rc == ACCEL_OK; ++i) {
      if (g->node[i].pool_ptr) continue; /* live: already backed */
      *rc = graph_pool(g->node[i].device, &pool);
      if (*rc == ACCEL_OK) *rc = pool_alloc(pool, g->node[i].bytes, &ptr[i]);
    }
    for (int i = 0; i < g->nnodes; ++i)
      if (ptr[i]) pool_free(ptr[i]);
  }
  pthread_mutex_unlock(&g_graph_mu);
  return n >= 0;
}

/* 1 if `addr` was a live address of a launched graph (now freed). */
static int graph_free(uint64_t addr) {
  int found = 0;
  pthread_mutex_lock(&g_graph_mu);
  for (int n = 0; n < g_nexecs && !found; ++n)
    for (int i = 0; i < g_execs[n].nnodes && !found; ++i) {
      stub_graph_node* node = &g_execs[n].node[i];
      if (node->addr != addr || node->pool_ptr == 0) continue;
      pool_free(node->pool_ptr);
      node->pool_ptr = 0;
      found = 1;
    }
  pthread_mutex_unlock(&g_graph_mu);
  return found;
}

/* Graph memory attributes by the drivers' numbers: 0 in use, 2 reserved. */
static int graph_attribute(int device, int attr, uint64_t* value) {
  uint64_t pool;
  int rc;
  if (value == NULL || (attr != 0 && attr != 2)) return ACCEL_INVALID_VALUE;
  pthread_mutex_lock(&g_graph_mu);
  rc = graph_pool(device, &pool);
  if (rc == ACCEL_OK) rc = pool_attribute(pool, attr == 0 ? 7 : 5, value, 0);
  pthread_mutex_unlock(&g_graph_mu);
  return rc;
}

static int graph_trim(int device) {
  uint64_t pool;
  int rc;
  pthread_mutex_lock(&g_graph_mu);
  rc = graph_pool(device, &pool);
  if (rc == ACCEL_OK) rc = pool_trim(pool, 0);
  pthread_mutex_unlock(&g_graph_mu);
  return rc;
}

/* Capture slot of `stream`, or -1; g_graph_mu held. */
static int graph_capture_slot(uint64_t stream) {
  for (int i = 0; i < GRAPH_CAPTURES; ++i)
    if (g_captures[i].graph >= 0 && g_captures[i].stream == stream) return i;
  return -1;
}

/* Starts capturing `stream` into graph `into` (0: a new graph) in `mode`. */
static int graph_capture_begin(uint64_t stream, uint64_t into, int mode) {
  int rc = ACCEL_INVALID_VALUE, slot = -1;
  uint64_t made = 0;
  if (stream == 0) return rc; /* the legacy stream cannot be captured */
  if (into == 0 && (rc = graph_create(&made)) != ACCEL_OK) return rc;
  pthread_mutex_lock(&g_graph_mu);
  atomic_store(&g_graph_captured_once, 1);
  int n = graph_index(g_graphs, GRAPH_HANDLE_BASE, into ? into : made);
  for (int i = 0; i < GRAPH_CAPTURES && slot < 0; ++i)
    if (g_captures[i].graph < 0) slot = i;
  rc = ACCEL_INVALID_VALUE;
  if (n >= 0 && slot >= 0 && graph_capture_slot(stream) < 0) {
    g_captures[slot].stream = stream;
    g_captures[slot].id = g_next_capture_id++;
    g_captures[slot].graph = n;
    g_captures[slot].mode = mode;
    g_captures[slot].invalidated = 0;
    g_captures[slot].thread = pthread_self();
    rc = ACCEL_OK;
  }
  pthread_mutex_unlock(&g_graph_mu);
  return rc;
}

static int graph_capture_end(uint64_t stream, uint64_t* graph) {
  int rc = ACCEL_INVALID_VALUE;
  if (graph == NULL) return rc;
  pthread_mutex_lock(&g_graph_mu);
  int slot = graph_capture_slot(stream);
  if (slot >= 0) {
    *graph = GRAPH_HANDLE_BASE + (uint64_t)g_captures[slot].graph;
    rc = g_captures[slot].invalidated ? ACCEL_CAPTURE_INVALIDATED : ACCEL_OK;
    g_captures[slot].graph = -1;
  }
  pthread_mutex_unlock(&g_graph_mu);
  return rc;
}

/* *capturing: 1 and *id the capture's id while `stream` is in capture, else 0. */
static int graph_capture_info(uint64_t stream, int* capturing, uint64_t* id) {
  if (capturing == NULL) return ACCEL_INVALID_VALUE;
  pthread_mutex_lock(&g_graph_mu);
  int slot = graph_capture_slot(stream);
  *capturing = slot >= 0;
  if (slot >= 0 && id != NULL) *id = g_captures[slot].id;
  pthread_mutex_unlock(&g_graph_mu);
  return ACCEL_OK;
}

/* 1 if `stream` is in capture: then an allocation node of `bytes` on
 * `device` was added (*rc its result, *addr its address), nothing allocated. */
static int graph_captured(uint64_t stream, int device, uint64_t bytes, uint64_t* addr, int* rc) {
  if (!atomic_load(&g_graph_captured_once)) return 0;
  pthread_mutex_lock(&g_graph_mu);
  int slot = graph_capture_slot(stream);
  if (slot >= 0) *rc = graph_add_locked(g_captures[slot].graph, device, bytes, addr);
  pthread_mutex_unlock(&g_graph_mu);
  return slot >= 0;
}

/* 1 if kernels launched on `stream` are captured rather than run. */
static int graph_capturing(uint64_t stream) {
  if (!atomic_load(&g_graph_captured_once)) return 0;
  pthread_mutex_lock(&g_graph_mu);
  int slot = graph_capture_slot(stream);
  pthread_mutex_unlock(&g_graph_mu);
  return slot >= 0;
}

/* Whether capture i forbids an unsafe call of this thread; g_graph_mu held. */
static int graph_capture_forbids(int i) {
  if (g_captures[i].graph < 0) return 0;
  return g_captures[i].mode == 0 || (g_captures[i].mode == 1 && pthread_equal(g_captures[i].thread, pthread_self()));
}

/* ACCEL_OK if an unsafe call may be made now, else ACCEL_CAPTURE_UNSUPPORTED
 * and the captures that forbid it are invalidated. */
static int graph_unsafe_call(void) {
  int rc = ACCEL_OK;
  if (!atomic_load(&g_graph_captured_once)) return rc;
  pthread_mutex_lock(&g_graph_mu);
  for (int i = 0; i < GRAPH_CAPTURES; ++i)
    if (graph_capture_forbids(i)) g_captures[i].invalidated = 1, rc = ACCEL_CAPTURE_UNSUPPORTED;
  pthread_mutex_unlock(&g_graph_mu);
  return rc;
}

/* An event record on `stream`: ACCEL_OK (record it; *captured: it went into
 * a capture instead, do not), or ACCEL_CAPTURE_IMPLICIT (the legacy stream
 * during a capture, which is invalidated). */
static int graph_event_record(uint64_t stream, uint64_t event, int* captured) {
  int rc = ACCEL_OK, slot, any = 0;
  *captured = 0;
  if (!atomic_load(&g_graph_captured_once)) return rc;
  pthread_mutex_lock(&g_graph_mu);
  slot = graph_capture_slot(stream);
  for (int i = 0; i < GRAPH_CAPTURES; ++i) any = any || g_captures[i].graph >= 0;
  if (slot < 0 && any && stream <= 1) {
    for (int i = 0; i < GRAPH_CAPTURES; ++i)
      if (g_captures[i].graph >= 0) g_captures[i].invalidated = 1;
    rc = ACCEL_CAPTURE_IMPLICIT;
  }
  for (int i = 0; i < GRAPH_CAPTURED_EVENTS; ++i)
    if (g_captured_events[i] == event) g_captured_events[i] = 0;
  *captured = slot >= 0 && rc == ACCEL_OK;
  for (int i = 0; *captured && i < GRAPH_CAPTURED_EVENTS; ++i)
    if (g_captured_events[i] == 0) {
      g_captured_events[i] = event;
      break;
    }
  pthread_mutex_unlock(&g_graph_mu);
  return rc;
}

/* ACCEL_OK if `event`'s status may be used (queried, waited for, timed),
 * else ACCEL_CAPTURE_UNSUPPORTED: it was recorded in a capture, which is
 * invalidated if still underway. */
static int graph_event_use(uint64_t event) {
  int rc = ACCEL_OK;
  if (!atomic_load(&g_graph_captured_once)) return rc;
  pthread_mutex_lock(&g_graph_mu);
  for (int i = 0; i < GRAPH_CAPTURED_EVENTS; ++i)
    if (event != 0 && g_captured_events[i] == event) rc = ACCEL_CAPTURE_UNSUPPORTED;
  if (rc != ACCEL_OK)
    for (int i = 0; i < GRAPH_CAPTURES; ++i)
      if (g_captures[i].graph >= 0) g_captures[i].invalidated = 1;
  pthread_mutex_unlock(&g_graph_mu);
  return rc;
}

#endif /* VGPU_TESTS_STUB_GRAPH_H_ */
