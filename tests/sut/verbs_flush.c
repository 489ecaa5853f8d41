/* A verbs program for faultline's tests: two RC QPs on one device, connected to each other.
 * B posts COUNT receives; A sends one 64-byte message at a time, each after the previous one
 * arrived, and stops at the first receive that completes in error. B's CQ is then drained for
 * up to two seconds, every completion counted by status, and it prints
 *   "received OK of COUNT, FLUSHED flushed, LEFT still posted"
 * A receive moved to the error state flushes the rest (the device says WR_FLUSH_ERR); one that
 * is not keeps them posted. Exit 0 when all COUNT arrived, 1 otherwise.
 * With INLINE_BYTES, the QPs ask for that much inline data and every message is an inline
 * send of that size (port-check's inline test).
 * Usage: sut_verbs_flush DEVICE GID_INDEX [COUNT [INLINE_BYTES]] */
#include "verbs_loopback.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s DEVICE GID_INDEX [COUNT]\n", argv[0]);
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0); /* each line when it happens: faultline times them */
  const int gid_index = atoi(argv[2]);
  const int count = argc > 3 ? atoi(argv[3]) : 20;
  const int inline_bytes = argc > 4 ? atoi(argv[4]) : 0;
  const int message_bytes = inline_bytes > 64 ? inline_bytes : 64;
  struct ibv_context* context = open_named_device(argv[1]);
  if (context == NULL) return 2;
  union ibv_gid gid;
  if (ibv_query_gid(context, 1, gid_index, &gid)) return fail("ibv_query_gid");
  struct ibv_pd* pd = ibv_alloc_pd(context);
  char* buffer = calloc((size_t)count + 1, message_bytes);
  struct ibv_mr* mr =
      ibv_reg_mr(pd, buffer, (size_t)(count + 1) * message_bytes, IBV_ACCESS_LOCAL_WRITE);
  struct ibv_cq* send_cq = ibv_create_cq(context, count + 1, NULL, NULL, 0);
  struct ibv_cq* recv_cq = ibv_create_cq(context, count + 1, NULL, NULL, 0);
  if (!pd || !mr || !send_cq || !recv_cq) return fail("ibv_alloc_pd/reg_mr/create_cq");
  struct ibv_qp_init_attr init = {.send_cq = send_cq, .recv_cq = recv_cq, .qp_type = IBV_QPT_RC};
  init.cap.max_send_wr = init.cap.max_recv_wr = (uint32_t)count + 1;
  init.cap.max_send_sge = init.cap.max_recv_sge = 1;
  init.cap.max_inline_data = (uint32_t)inline_bytes;
  struct ibv_qp* a = ibv_create_qp(pd, &init);
  struct ibv_qp* b = ibv_create_qp(pd, &init);
  if (!a || !b) {
    perror("ibv_create_qp");
    return 1;
  }
  if (connect_qp(a, b->qp_num, gid_index, &gid) || connect_qp(b, a->qp_num, gid_index, &gid))
    return 2;
  for (int i = 0; i < count; ++i) {
    struct ibv_sge sge = {(uintptr_t)(buffer + (size_t)(i + 1) * message_bytes), message_bytes,
                          mr->lkey};
    struct ibv_recv_wr wr = {.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1};
    struct ibv_recv_wr* bad = NULL;
    if (ibv_post_recv(b, &wr, &bad)) return fail("ibv_post_recv");
  }
  int ok = 0;
  int flushed = 0;
  int completed = 0;
  int stopped = 0;
  double deadline = 0;
  while (completed < count) {
    if (!stopped && completed == ok) {
      /* The next message, once the previous one arrived. */
      struct ibv_sge sge = {(uintptr_t)buffer, message_bytes, mr->lkey};
      struct ibv_send_wr wr = {.wr_id = (uint64_t)ok, .sg_list = &sge, .num_sge = 1};
      wr.opcode = IBV_WR_SEND;
      wr.send_flags = IBV_SEND_SIGNALED | (inline_bytes > 0 ? IBV_SEND_INLINE : 0);
      struct ibv_send_wr* bad = NULL;
      const int posted = ibv_post_send(a, &wr, &bad);
      if (posted) {
        fprintf(stderr, "ibv_post_send: %s\n", strerror(posted));
        return 1;
      }
      deadline = now_seconds() + 2;
    }
    struct ibv_wc wc;
    struct ibv_wc sent;
    while (ibv_poll_cq(send_cq, 1, &sent) > 0) {
    }
    const int polled = ibv_poll_cq(recv_cq, 1, &wc);
    if (polled < 0) return fail("ibv_poll_cq");
    if (polled == 0) {
      if (now_seconds() > deadline) break;
      continue;
    }
    ++completed;
    if (wc.status == IBV_WC_SUCCESS) {
      ++ok;
      continue;
    }
    if (wc.status == IBV_WC_WR_FLUSH_ERR) {
      ++flushed;
    } else {
      printf("receive %d: %s (vendor_err 0x%x)\n", (int)wc.wr_id, ibv_wc_status_str(wc.status),
             wc.vendor_err);
    }
    stopped = 1;
    deadline = now_seconds() + 2;
  }
  printf("received %d of %d, %d flushed, %d still posted\n", ok, count, flushed, count - completed);
  fflush(stdout);
  release_loopback(a, b, send_cq, recv_cq, mr, pd, context);
  return ok == count ? 0 : 1;
}
