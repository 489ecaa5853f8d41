/* A verbs program for faultline's port-check tests, sizing its send queue the way DeepEP's
 * dispatch does: tx_depth = 3 * tokens + 1 (Megatron-LM #3999 asked 196609 for 65536 tokens).
 * It opens DEVICE, creates an RC QP with max_send_wr = tx_depth and says whether the device
 * granted it. Exit 0 when it did, 1 when ibv_create_qp refused (its errno printed), 2 on setup
 * errors.
 * Usage: sut_verbs_deepep_qp DEVICE TOKENS */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s DEVICE TOKENS\n", argv[0]);
    return 2;
  }
  const unsigned long tokens = strtoul(argv[2], NULL, 10);
  const unsigned long tx_depth = 3 * tokens + 1;
  int count = 0;
  struct ibv_device** devices = ibv_get_device_list(&count);
  struct ibv_context* context = NULL;
  for (int i = 0; i < count && context == NULL; ++i)
    if (strcmp(ibv_get_device_name(devices[i]), argv[1]) == 0)
      context = ibv_open_device(devices[i]);
  if (context == NULL) {
    fprintf(stderr, "no device %s\n", argv[1]);
    return 2;
  }
  struct ibv_pd* pd = ibv_alloc_pd(context);
  struct ibv_cq* cq = ibv_create_cq(context, 1024, NULL, NULL, 0);
  if (pd == NULL || cq == NULL) {
    perror("ibv_alloc_pd/ibv_create_cq");
    return 2;
  }
  struct ibv_qp_init_attr init = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC};
  init.cap.max_send_wr = (uint32_t)tx_depth;
  init.cap.max_recv_wr = 16;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  struct ibv_qp* qp = ibv_create_qp(pd, &init);
  int status = 0;
  if (qp == NULL) {
    printf("ibv_create_qp max_send_wr %lu (3 * %lu tokens + 1): %s (errno %d)\n", tx_depth, tokens,
           strerror(errno), errno);
    status = 1;
  } else {
    printf("created a QP with max_send_wr %lu (3 * %lu tokens + 1)\n", tx_depth, tokens);
    ibv_destroy_qp(qp);
  }
  ibv_destroy_cq(cq);
  ibv_dealloc_pd(pd);
  ibv_close_device(context);
  ibv_free_device_list(devices);
  return status;
}
