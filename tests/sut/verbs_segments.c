/* A verbs program for faultline's tests: messages of three segments, as a protocol builds them
 * (a 16-byte header, a body, a 16-byte trailer, each from its own registered buffer), sent by
 * QP A as one send of three SGEs into a receive of three SGEs on QP B, on one device.
 * B checks every message: its length, the header's sequence and body length, the body's
 * bytes and the trailer's checksum. The first wrong message is named and the program exits 1:
 *   "message 3: 80 of 96 bytes arrived (a segment is missing)"
 * otherwise it prints "received COUNT messages of 3 segments, all checked" and exits 0.
 * With `inline`, each message is instead built in a stack buffer, which is never registered,
 * and posted as one inline send (a control message, as many protocols send them).
 * Usage: sut_verbs_segments DEVICE GID_INDEX [COUNT [inline]] */
#include <stdint.h>

#include "verbs_loopback.h"

enum { kHeader = 16, kBody = 64, kTrailer = 16, kMessage = kHeader + kBody + kTrailer };

struct header {
  uint32_t magic;
  uint32_t sequence;
  uint32_t body_bytes;
  uint32_t unused;
};

static uint64_t checksum(const unsigned char* bytes, size_t length) {
  uint64_t sum = 1469598103934665603ULL;
  for (size_t i = 0; i < length; ++i) sum = (sum ^ bytes[i]) * 1099511628211ULL;
  return sum;
}

/* Message `sequence` into its three parts. */
static void build(int sequence, unsigned char* header, unsigned char* body,
                  unsigned char* trailer) {
  const struct header fields = {0xfa017e5u, (uint32_t)sequence, kBody, 0};
  memcpy(header, &fields, sizeof fields);
  for (int i = 0; i < kBody; ++i) body[i] = (unsigned char)(sequence * 7 + i);
  const uint64_t sum = checksum(body, kBody);
  memset(trailer, 0, kTrailer);
  memcpy(trailer, &sum, sizeof sum);
}

/* What is wrong with a received message, or NULL. */
static const char* check(int sequence, uint32_t byte_len, const unsigned char* message) {
  static char problem[160];
  if (byte_len != kMessage) {
    snprintf(problem, sizeof problem, "%u of %d bytes arrived (a segment is missing)", byte_len,
             kMessage);
    return problem;
  }
  unsigned char header[kHeader];
  unsigned char body[kBody];
  unsigned char trailer[kTrailer];
  build(sequence, header, body, trailer);
  if (memcmp(message, header, kHeader) != 0) return "its header is wrong";
  if (memcmp(message + kHeader, body, kBody) != 0) return "its body is wrong";
  if (memcmp(message + kHeader + kBody, trailer, kTrailer) != 0) return "its checksum is wrong";
  return NULL;
}

/* Posts message `sequence`: three SGEs of `sent`, or one inline send from the stack. */
static int post_message(struct ibv_qp* qp, int sequence, unsigned char* sent, uint32_t lkey,
                        int use_inline) {
  unsigned char stack_copy[kMessage];
  struct ibv_sge sges[3];
  struct ibv_send_wr wr = {.wr_id = (uint64_t)sequence, .sg_list = sges, .num_sge = 3};
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  build(sequence, sent, sent + kHeader, sent + kHeader + kBody);
  if (use_inline) {
    memcpy(stack_copy, sent, kMessage);
    sges[0] = (struct ibv_sge){(uintptr_t)stack_copy, kMessage, 0};
    wr.num_sge = 1;
    wr.send_flags |= IBV_SEND_INLINE;
  } else {
    /* Three parts, each from its own place in the registered buffer. */
    sges[0] = (struct ibv_sge){(uintptr_t)sent, kHeader, lkey};
    sges[1] = (struct ibv_sge){(uintptr_t)(sent + kHeader), kBody, lkey};
    sges[2] = (struct ibv_sge){(uintptr_t)(sent + kHeader + kBody), kTrailer, lkey};
  }
  struct ibv_send_wr* bad = NULL;
  const int posted = ibv_post_send(qp, &wr, &bad);
  if (posted) fprintf(stderr, "ibv_post_send: %s (errno %d)\n", strerror(posted), posted);
  return posted;
}

static int post_receive(struct ibv_qp* qp, int sequence, unsigned char* into, uint32_t lkey) {
  struct ibv_sge sges[3] = {{(uintptr_t)into, kHeader, lkey},
                            {(uintptr_t)(into + kHeader), kBody, lkey},
                            {(uintptr_t)(into + kHeader + kBody), kTrailer, lkey}};
  struct ibv_recv_wr wr = {.wr_id = (uint64_t)sequence, .sg_list = sges, .num_sge = 3};
  struct ibv_recv_wr* bad = NULL;
  const int posted = ibv_post_recv(qp, &wr, &bad);
  if (posted) fprintf(stderr, "ibv_post_recv: %s (errno %d)\n", strerror(posted), posted);
  return posted;
}

/* The next completion of `cq` within two seconds; 0 when there was none. */
static int wait_completion(struct ibv_cq* cq, struct ibv_wc* wc) {
  const double deadline = now_seconds() + 2;
  while (now_seconds() < deadline) {
    const int polled = ibv_poll_cq(cq, 1, wc);
    if (polled != 0) return polled;
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s DEVICE GID_INDEX [COUNT [inline]]\n", argv[0]);
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  const int gid_index = atoi(argv[2]);
  const int count = argc > 3 ? atoi(argv[3]) : 20;
  const int use_inline = argc > 4 && strcmp(argv[4], "inline") == 0;
  struct ibv_context* context = open_named_device(argv[1]);
  if (context == NULL) return 2;
  union ibv_gid gid;
  if (ibv_query_gid(context, 1, gid_index, &gid)) return fail("ibv_query_gid");
  struct ibv_pd* pd = ibv_alloc_pd(context);
  unsigned char* buffer = calloc(2, kMessage); /* what A sends, what B receives */
  struct ibv_mr* mr = ibv_reg_mr(pd, buffer, 2 * kMessage, IBV_ACCESS_LOCAL_WRITE);
  struct ibv_cq* send_cq = ibv_create_cq(context, 4, NULL, NULL, 0);
  struct ibv_cq* recv_cq = ibv_create_cq(context, 4, NULL, NULL, 0);
  if (!pd || !mr || !send_cq || !recv_cq) return fail("ibv_alloc_pd/reg_mr/create_cq");
  struct ibv_qp_init_attr init = {.send_cq = send_cq, .recv_cq = recv_cq, .qp_type = IBV_QPT_RC};
  init.cap.max_send_wr = init.cap.max_recv_wr = 2;
  init.cap.max_send_sge = init.cap.max_recv_sge = 3;
  init.cap.max_inline_data = use_inline ? kMessage : 0;
  struct ibv_qp* a = ibv_create_qp(pd, &init);
  struct ibv_qp* b = ibv_create_qp(pd, &init);
  if (!a || !b) return fail("ibv_create_qp");
  if (connect_qp(a, b->qp_num, gid_index, &gid) || connect_qp(b, a->qp_num, gid_index, &gid))
    return 2;
  unsigned char* received = buffer + kMessage;
  for (int i = 0; i < count; ++i) {
    if (post_receive(b, i, received, mr->lkey) || post_message(a, i, buffer, mr->lkey, use_inline))
      return 1;
    struct ibv_wc sent;
    struct ibv_wc arrived;
    if (wait_completion(send_cq, &sent) <= 0 || wait_completion(recv_cq, &arrived) <= 0) {
      fprintf(stderr, "message %d: no completion within 2 s\n", i);
      return 1;
    }
    if (sent.status != IBV_WC_SUCCESS || arrived.status != IBV_WC_SUCCESS) {
      const struct ibv_wc* failed = sent.status != IBV_WC_SUCCESS ? &sent : &arrived;
      fprintf(stderr, "message %d: %s completion error: %s (vendor_err 0x%x)\n", i,
              failed == &sent ? "send" : "receive", ibv_wc_status_str(failed->status),
              failed->vendor_err);
      return 1;
    }
    const char* problem = check(i, arrived.byte_len, received);
    if (problem != NULL) {
      printf("message %d: %s\n", i, problem);
      return 1;
    }
  }
  printf("received %d messages of 3 segments, all checked\n", count);
  release_loopback(a, b, send_cq, recv_cq, mr, pd, context);
  return 0;
}
