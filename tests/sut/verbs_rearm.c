/* A verbs program for faultline's tests: completions read as rping and librdmacm's
 * rdma_get_send_comp read them. Two RC QPs of one process, connected to each other; A's send
 * CQ has a completion channel. A posts COUNT signaled sends at once (B has COUNT receives
 * posted), lets them all complete, then waits for an event, re-arms, and polls one entry at a
 * time until the CQ says it is empty, and again after each event, for up to two seconds
 * without one. It prints
 *   "send completions: GOT of COUNT"
 * A completion lost on the way (dropped) is one fewer; one that hid those behind it would
 * leave them unread, since a re-armed CQ raises no event for what it already holds.
 * Exit 0 when all COUNT arrived, 1 otherwise.
 * Usage: sut_verbs_rearm DEVICE GID_INDEX [COUNT] */
#include <poll.h>
#include <unistd.h>

#include "verbs_loopback.h"

/* Waits up to two seconds for the channel's next event, takes and acknowledges it; 0 if none. */
static int next_event(struct ibv_comp_channel* channel) {
  struct pollfd ready = {.fd = channel->fd, .events = POLLIN};
  if (poll(&ready, 1, 2000) <= 0) return 0;
  struct ibv_cq* cq = NULL;
  void* cq_context = NULL;
  if (ibv_get_cq_event(channel, &cq, &cq_context)) return 0;
  ibv_ack_cq_events(cq, 1);
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s DEVICE GID_INDEX [COUNT]\n", argv[0]);
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  const int gid_index = atoi(argv[2]);
  const int count = argc > 3 ? atoi(argv[3]) : 20;
  struct ibv_context* context = open_named_device(argv[1]);
  if (context == NULL) return 2;
  union ibv_gid gid;
  if (ibv_query_gid(context, 1, gid_index, &gid)) return fail("ibv_query_gid");
  struct ibv_pd* pd = ibv_alloc_pd(context);
  char* buffer = calloc((size_t)count + 1, 64);
  struct ibv_mr* mr = ibv_reg_mr(pd, buffer, (size_t)(count + 1) * 64, IBV_ACCESS_LOCAL_WRITE);
  struct ibv_comp_channel* channel = ibv_create_comp_channel(context);
  struct ibv_cq* send_cq = ibv_create_cq(context, count + 1, NULL, channel, 0);
  struct ibv_cq* recv_cq = ibv_create_cq(context, count + 1, NULL, NULL, 0);
  if (!pd || !mr || !channel || !send_cq || !recv_cq)
    return fail("ibv_alloc_pd/reg_mr/create_comp_channel/create_cq");
  struct ibv_qp_init_attr init = {.send_cq = send_cq, .recv_cq = recv_cq, .qp_type = IBV_QPT_RC};
  init.cap.max_send_wr = init.cap.max_recv_wr = (uint32_t)count + 1;
  init.cap.max_send_sge = init.cap.max_recv_sge = 1;
  struct ibv_qp* a = ibv_create_qp(pd, &init);
  struct ibv_qp* b = ibv_create_qp(pd, &init);
  if (!a || !b) return fail("ibv_create_qp");
  if (connect_qp(a, b->qp_num, gid_index, &gid) || connect_qp(b, a->qp_num, gid_index, &gid))
    return 2;
  for (int i = 0; i < count; ++i) {
    struct ibv_sge sge = {(uintptr_t)(buffer + (size_t)(i + 1) * 64), 64, mr->lkey};
    struct ibv_recv_wr wr = {.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1};
    struct ibv_recv_wr* bad = NULL;
    if (ibv_post_recv(b, &wr, &bad)) return fail("ibv_post_recv");
  }
  if (ibv_req_notify_cq(send_cq, 0)) return fail("ibv_req_notify_cq");
  for (int i = 0; i < count; ++i) {
    struct ibv_sge sge = {(uintptr_t)buffer, 64, mr->lkey};
    struct ibv_send_wr wr = {.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1};
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    struct ibv_send_wr* bad = NULL;
    const int posted = ibv_post_send(a, &wr, &bad);
    if (posted) {
      fprintf(stderr, "ibv_post_send: %s\n", strerror(posted));
      return 1;
    }
  }
  /* Every send completes before the first read: those after a lost one wait in the CQ. */
  for (int arrived = 0; arrived < count;) {
    struct ibv_wc wc;
    const int polled = ibv_poll_cq(recv_cq, 1, &wc);
    if (polled < 0) return fail("ibv_poll_cq");
    arrived += polled;
  }
  usleep(100000);
  int got = 0;
  while (got < count && next_event(channel)) {
    if (ibv_req_notify_cq(send_cq, 0)) return fail("ibv_req_notify_cq");
    struct ibv_wc wc;
    int polled = 0;
    while ((polled = ibv_poll_cq(send_cq, 1, &wc)) == 1) {
      if (wc.status != IBV_WC_SUCCESS) {
        printf("send %d: %s\n", (int)wc.wr_id, ibv_wc_status_str(wc.status));
        return 1;
      }
      ++got;
    }
    if (polled < 0) return fail("ibv_poll_cq");
  }
  printf("send completions: %d of %d\n", got, count);
  fflush(stdout);
  ibv_destroy_qp(a);
  ibv_destroy_qp(b);
  ibv_destroy_cq(send_cq);
  ibv_destroy_cq(recv_cq);
  ibv_destroy_comp_channel(channel);
  ibv_dereg_mr(mr);
  ibv_dealloc_pd(pd);
  ibv_close_device(context);
  return got == count ? 0 : 1;
}
