/* What the verbs test programs share: two RC QPs of one process on one device, connected to
 * each other through its RoCE GID. */
#pragma once
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int fail(const char* what) {
  perror(what);
  return 2;
}

/* The device named `name`, opened; NULL (said on stderr) when there is none. */
static struct ibv_context* open_named_device(const char* name) {
  int devices = 0;
  struct ibv_device** list = ibv_get_device_list(&devices);
  struct ibv_context* context = NULL;
  for (int i = 0; i < devices && context == NULL; ++i)
    if (strcmp(ibv_get_device_name(list[i]), name) == 0) context = ibv_open_device(list[i]);
  ibv_free_device_list(list);
  if (context == NULL) fprintf(stderr, "%s: no such verbs device\n", name);
  return context;
}

/* RESET -> INIT -> RTR -> RTS, talking to `remote` on the same port and GID. */
static int connect_qp(struct ibv_qp* qp, uint32_t remote, int gid_index, const union ibv_gid* gid) {
  struct ibv_qp_attr attr = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1};
  attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
  if (ibv_modify_qp(qp, &attr,
                    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
    return fail("ibv_modify_qp INIT");
  memset(&attr, 0, sizeof attr);
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = IBV_MTU_1024;
  attr.dest_qp_num = remote;
  attr.max_dest_rd_atomic = 1;
  attr.min_rnr_timer = 12;
  attr.ah_attr.is_global = 1;
  attr.ah_attr.grh.dgid = *gid;
  attr.ah_attr.grh.sgid_index = (uint8_t)gid_index;
  attr.ah_attr.grh.hop_limit = 1;
  attr.ah_attr.port_num = 1;
  if (ibv_modify_qp(qp, &attr,
                    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                        IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
    return fail("ibv_modify_qp RTR");
  memset(&attr, 0, sizeof attr);
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = 14;
  attr.retry_cnt = 7;
  attr.rnr_retry = 7;
  attr.max_rd_atomic = 1;
  if (ibv_modify_qp(qp, &attr,
                    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                        IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
    return fail("ibv_modify_qp RTS");
  return 0;
}

/* Everything a loopback program made, released in order. */
static void release_loopback(struct ibv_qp* a, struct ibv_qp* b, struct ibv_cq* send_cq,
                             struct ibv_cq* recv_cq, struct ibv_mr* mr, struct ibv_pd* pd,
                             struct ibv_context* context) {
  ibv_destroy_qp(a);
  ibv_destroy_qp(b);
  ibv_destroy_cq(send_cq);
  ibv_destroy_cq(recv_cq);
  ibv_dereg_mr(mr);
  ibv_dealloc_pd(pd);
  ibv_close_device(context);
}
