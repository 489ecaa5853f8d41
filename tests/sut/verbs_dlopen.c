/* A verbs program that reaches libibverbs only through dlopen/dlsym, as NCCL's and RCCL's
 * ibvwrap do: it opens the named device (default: the first), queries it and prints its
 * max_qp_wr. faultline's tests check the verbs interposer still instruments it.
 * Usage: sut_verbs_dlopen [DEVICE] */
#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <string.h>

typedef struct ibv_device** (*GetDeviceList)(int*);
typedef void (*FreeDeviceList)(struct ibv_device**);
typedef const char* (*GetDeviceName)(struct ibv_device*);
typedef struct ibv_context* (*OpenDevice)(struct ibv_device*);
typedef int (*QueryDevice)(struct ibv_context*, struct ibv_device_attr*);
typedef int (*CloseDevice)(struct ibv_context*);

int main(int argc, char** argv) {
  void* verbs = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
  if (verbs == NULL) {
    fprintf(stderr, "dlopen libibverbs.so.1: %s\n", dlerror());
    return 2;
  }
  GetDeviceList get_device_list = (GetDeviceList)dlsym(verbs, "ibv_get_device_list");
  FreeDeviceList free_device_list = (FreeDeviceList)dlsym(verbs, "ibv_free_device_list");
  GetDeviceName get_device_name = (GetDeviceName)dlsym(verbs, "ibv_get_device_name");
  OpenDevice open_device = (OpenDevice)dlsym(verbs, "ibv_open_device");
  QueryDevice query_device = (QueryDevice)dlsym(verbs, "ibv_query_device");
  CloseDevice close_device = (CloseDevice)dlsym(verbs, "ibv_close_device");
  if (!get_device_list || !free_device_list || !get_device_name || !open_device ||
      !query_device || !close_device) {
    fprintf(stderr, "dlsym: a libibverbs function is missing\n");
    return 2;
  }
  int count = 0;
  struct ibv_device** devices = get_device_list(&count);
  struct ibv_device* chosen = NULL;
  for (int i = 0; i < count && chosen == NULL; ++i)
    if (argc < 2 || strcmp(get_device_name(devices[i]), argv[1]) == 0) chosen = devices[i];
  if (chosen == NULL) {
    fprintf(stderr, "no device %s among %d\n", argc > 1 ? argv[1] : "(any)", count);
    return 2;
  }
  struct ibv_context* context = open_device(chosen);
  struct ibv_device_attr attr;
  if (context == NULL || query_device(context, &attr) != 0) {
    fprintf(stderr, "ibv_open_device/ibv_query_device %s failed\n", get_device_name(chosen));
    return 1;
  }
  printf("%s max_qp_wr=%d\n", get_device_name(chosen), attr.max_qp_wr);
  close_device(context);
  free_device_list(devices);
  dlclose(verbs);
  return 0;
}
