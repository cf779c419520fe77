/* floor: speed floor for batchdiff: plain libmicrohttpd with the server's thread pool and
   epoll, that reads and drops the request body and answers a fixed small JSON, nothing else. */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
static const char OK[] = "{\"status\":\"ok\"}";
static const char DIFF[] = "{\"rows\":{\"deleted\":[1,5],\"inserted\":[3,7],\"reloaded\":[2],\"moved\":[]},\"counts\":{\"old\":20,\"new\":20}}";
static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *s, size_t n) {
  struct MHD_Response *r = MHD_create_response_from_buffer(n, (void *)s, MHD_RESPMEM_PERSISTENT);
  MHD_add_response_header(r, "Content-Type", "application/json");
  enum MHD_Result ret = MHD_queue_response(c, code, r); MHD_destroy_response(r); return ret;
}
static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *ver, const char *data, size_t *size, void **state) {
  (void)cls; (void)ver; (void)data;
  static int seen;
  if (!*state) { *state = &seen; return MHD_YES; }                          /* headers only; answering now costs keep-alive */
  if (strcmp(method, "POST") != 0)
    return strcmp(url, "/healthz") == 0 ? reply(c, 200, OK, sizeof OK - 1) : reply(c, 404, "{}", 2);
  if (*size) { *size = 0; return MHD_YES; }                                 /* read the chunk and drop it */
  return reply(c, 200, DIFF, sizeof DIFF - 1);                              /* whole body read */
}
int main(int argc, char **argv) {
  if (argc < 2) return 2;
  sigset_t s; sigemptyset(&s); sigaddset(&s, SIGTERM); sigaddset(&s, SIGINT);
  pthread_sigmask(SIG_BLOCK, &s, NULL);                                     /* MHD threads inherit */
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1])), .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
  struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, NULL, NULL, handle, NULL,
      MHD_OPTION_SOCK_ADDR, &a, MHD_OPTION_THREAD_POOL_SIZE, 2u, MHD_OPTION_END);
  if (!d) return 1;
  int sig; sigwait(&s, &sig); MHD_stop_daemon(d); return 0;
}
