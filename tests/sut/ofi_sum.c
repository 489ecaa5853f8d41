/* A small libfabric program faultline's tests run as a system under test: one process, two
 * reliable-datagram endpoints; one sends 32 messages of a known pattern, the other receives
 * them, and the program prints the sum of every byte received. Built twice:
 *   - sut_ofi_sum_checked reads each error completion and stops with its text and a non-zero
 *     exit, as a careful stack does;
 *   - sut_ofi_sum_blind consumes the error entry and never looks at its status (the class of
 *     bug where a stack counts a completion without checking it), so it prints a sum computed
 *     from whatever the buffers hold.
 * Usage: sut_ofi_sum [PROVIDER [small|inject|normal [_exit]]]   (default tcp; 1 KiB messages sent
 * with fi_send; small: 48-byte ones; inject: 48-byte ones sent with fi_inject, which completes
 * nothing; _exit: it leaves by _exit, without exit's handlers, as a program leaving a hung
 * teardown does) */
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { kMessages = 32, kBytes = 1024, kSmallBytes = 48 };

static struct fid_fabric* fabric;
static struct fid_domain* domain;
static struct fid_cq* cq;
static struct fid_av* av;

static void check(int ret, const char* call) {
  if (ret == 0) return;
  fprintf(stderr, "%s: %s (%d)\n", call, fi_strerror(-ret), ret);
  exit(2);
}

static struct fid_ep* open_endpoint(struct fi_info* info, fi_addr_t* address) {
  struct fid_ep* ep = NULL;
  char name[256];
  size_t length = sizeof name;
  check(fi_endpoint(domain, info, &ep, NULL), "fi_endpoint");
  check(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind cq");
  check(fi_ep_bind(ep, &av->fid, 0), "fi_ep_bind av");
  check(fi_enable(ep), "fi_enable");
  check(fi_getname(&ep->fid, name, &length), "fi_getname");
  if (fi_av_insert(av, name, 1, address, 0, NULL) != 1) check(-FI_EINVAL, "fi_av_insert");
  return ep;
}

static double now_seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/* One completion, or exits: the checked build on an error entry, either build after 5 s
 * without one. */
static void wait_for_completion(int seen) {
  struct fi_cq_msg_entry entry;
  const double deadline = now_seconds() + 5;
  while (now_seconds() < deadline) {
    ssize_t got = fi_cq_read(cq, &entry, 1);
    if (got == 1) return;
    if (got == -FI_EAGAIN) continue;
    if (got != -FI_EAVAIL) check((int)got, "fi_cq_read");
    struct fi_cq_err_entry error;
    memset(&error, 0, sizeof error);
    if (fi_cq_readerr(cq, &error, 0) != 1) check(-FI_EOTHER, "fi_cq_readerr");
#ifdef SUT_CHECK_STATUS
    fprintf(stderr, "completion error at completion %d: %s (prov_errno %d: %s)\n", seen + 1,
            fi_strerror(error.err), error.prov_errno,
            fi_cq_strerror(cq, error.prov_errno, error.err_data, NULL, 0));
    exit(1);
#else
    (void)seen;
    return; /* counted as done: its status is never looked at */
#endif
  }
  fprintf(stderr, "no completion within 5 s after completion %d\n", seen);
  exit(3);
}

int main(int argc, char** argv) {
  struct fi_info* hints = fi_allocinfo();
  struct fi_info* info = NULL;
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG;
  hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  hints->fabric_attr->prov_name = strdup(argc > 1 ? argv[1] : "tcp");
  check(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info), "fi_getinfo");
  check(fi_fabric(info->fabric_attr, &fabric, NULL), "fi_fabric");
  check(fi_domain(fabric, info, &domain, NULL), "fi_domain");
  struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_MSG, .size = 4 * kMessages};
  check(fi_cq_open(domain, &cq_attr, &cq, NULL), "fi_cq_open");
  struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
  check(fi_av_open(domain, &av_attr, &av, NULL), "fi_av_open");
  fi_addr_t sender_address = 0;
  fi_addr_t receiver_address = 0;
  struct fid_ep* sender = open_endpoint(info, &sender_address);
  struct fid_ep* receiver = open_endpoint(info, &receiver_address);

  static unsigned char sent[kMessages][kBytes];
  static unsigned char received[kMessages][kBytes];
  struct fid_mr* sent_mr = NULL;
  struct fid_mr* received_mr = NULL;
  check(fi_mr_reg(domain, sent, sizeof sent, FI_SEND, 0, 1, 0, &sent_mr, NULL), "fi_mr_reg");
  check(fi_mr_reg(domain, received, sizeof received, FI_RECV, 0, 2, 0, &received_mr, NULL),
        "fi_mr_reg");
  for (int m = 0; m < kMessages; ++m)
    for (int b = 0; b < kBytes; ++b) sent[m][b] = (unsigned char)(m * 7 + b + 1);

  for (int m = 0; m < kMessages; ++m)
    check((int)fi_recv(receiver, received[m], kBytes, fi_mr_desc(received_mr), sender_address,
                       received[m]),
          "fi_recv");
  const char* mode = argc > 2 ? argv[2] : "";
  const int inject = strcmp(mode, "inject") == 0;
  const size_t bytes = inject || strcmp(mode, "small") == 0 ? kSmallBytes : kBytes;
  int seen = 0;
  for (int m = 0; m < kMessages; ++m) {
    ssize_t posted;
    while ((posted = inject ? fi_inject(sender, sent[m], bytes, receiver_address)
                            : fi_send(sender, sent[m], bytes, fi_mr_desc(sent_mr), receiver_address,
                                      sent[m])) == -FI_EAGAIN)
      fi_cq_read(cq, NULL, 0);
    check((int)posted, inject ? "fi_inject" : "fi_send");
  }
  /* Every receive completes, and every send but an inject. */
  for (; seen < (inject ? 1 : 2) * kMessages; ++seen) wait_for_completion(seen);

  unsigned long long sum = 0;
  for (int m = 0; m < kMessages; ++m)
    for (size_t b = 0; b < bytes; ++b) sum += received[m][b];
  printf("sum=%llu\n", sum);
  if (argc > 3 && strcmp(argv[3], "_exit") == 0) {
    fflush(stdout);
    _exit(0);
  }
  fi_close(&receiver->fid);
  fi_close(&sender->fid);
  fi_close(&sent_mr->fid);
  fi_close(&received_mr->fid);
  fi_close(&av->fid);
  fi_close(&cq->fid);
  fi_close(&domain->fid);
  fi_close(&fabric->fid);
  fi_freeinfo(info);
  fi_freeinfo(hints);
  return 0;
}
