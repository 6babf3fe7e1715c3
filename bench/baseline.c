/* baseline.c — the bare speed of the HTTP library as configured by inkwell (poll
 * mode, thread pool): a handler answering a fixed 300-byte JSON. make bench runs it
 * beside inkwell so every figure can be given as a ratio to it.
 * usage: bench-baseline PORT THREADS */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char body[301];

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    if (!*con_cls) {
        *con_cls = c;
        return MHD_YES;
    }
    struct MHD_Response *r =
        MHD_create_response_from_buffer(300, body, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return ret;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s PORT THREADS\n", argv[0]);
        return 2;
    }
    memset(body, 'x', 300);
    memcpy(body, "{\"data\":\"", 9);
    memcpy(body + 297, "\"}\n", 3);
    body[300] = '\0';
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_POLL_INTERNAL_THREAD, (uint16_t)atoi(argv[1]), NULL, NULL, handler, NULL,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)atoi(argv[2]), MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)30, MHD_OPTION_CONNECTION_LIMIT, (unsigned)1024, MHD_OPTION_END);
    if (!d)
        return 1;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGTERM);
    sigaddset(&s, SIGINT);
    sigprocmask(SIG_BLOCK, &s, NULL);
    int sig;
    sigwait(&s, &sig);
    MHD_stop_daemon(d);
    return 0;
}
