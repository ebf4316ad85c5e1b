/* SPDX-License-Identifier: MIT */
/* The exporter's HTTP endpoint, on libmicrohttpd (one internal polling thread, epoll).
 *
 * erg binds the socket itself so that an address in use, a privileged port or a bad address gets
 * its own message, then hands the listening socket to the daemon. The handler serves text the
 * sampler rendered; it never opens a file or runs anything, whatever the request says. */
#include "erg/serve.h"

#include "serve_internal.h"

#include "core/dynlib.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* libmicrohttpd (and the TLS stack it pulls in), loaded when an exporter starts (core/dynlib.h),
 * not with every erg process. */
#define MHD_FUNCS(X)                                                                               \
    X(MHD_add_response_header)                                                                     \
    X(MHD_create_response_from_buffer)                                                             \
    X(MHD_destroy_response)                                                                        \
    X(MHD_lookup_connection_value)                                                                 \
    X(MHD_queue_response)                                                                          \
    X(MHD_start_daemon)                                                                            \
    X(MHD_stop_daemon)

struct mhd {
    MHD_FUNCS(ERG__DYNLIB_FIELD)
};
static struct erg__dynlib mhd_lib =
    ERG__DYNLIB_INIT("libmicrohttpd.so.12", "the HTTP exporter", "libmicrohttpd12");
static struct mhd mhd_fns;

static int mhd_bind(void *handle, void *table, const char **missing)
{
    struct mhd *t = table;
    MHD_FUNCS(ERG__DYNLIB_BIND)
    return ERG_OK;
}

struct erg_http {
    const struct mhd *M; /* the libmicrohttpd functions */
    struct MHD_Daemon *daemon;
    erg_exporter *exporter;
    char *token; /* "Bearer <token>", or NULL */
    unsigned port;
    double last_scrape_s; /* NaN before the first */
    int fd;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* constant-time comparison of two strings of possibly different length */
static int same_secret(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned char diff = (unsigned char)(la != lb);
    for (size_t i = 0; i < lb; i++)
        diff |= (unsigned char)(a[i < la ? i : 0] ^ b[i]);
    return diff == 0;
}

static enum MHD_Result reply(const erg_http *h, struct MHD_Connection *c, unsigned status,
                             const char *type, char *body, size_t len, int owned)
{
    const struct mhd *M = h->M;
    struct MHD_Response *r = M->MHD_create_response_from_buffer(
        len, body, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        if (owned)
            free(body);
        return MHD_NO;
    }
    M->MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (status == MHD_HTTP_UNAUTHORIZED)
        M->MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"erg\"");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        M->MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    enum MHD_Result ret = M->MHD_queue_response(c, status, r);
    M->MHD_destroy_response(r);
    return ret;
}

static char page_index[] = "<html><head><title>erg exporter</title></head><body>"
                           "<h1>erg exporter</h1><p><a href=\"/metrics\">/metrics</a></p>"
                           "</body></html>\n";
static char page_404[] = "not found: this exporter serves /metrics\n";
static char page_405[] = "method not allowed: GET or HEAD\n";
static char page_401[] = "unauthorized: send Authorization: Bearer <token>\n";
static char page_500[] = "out of memory\n";

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **req_cls)
{
    (void)version;
    (void)upload_data;
    erg_http *h = cls;
    if (*req_cls == NULL) { /* first call: headers only; answer on the second */
        static int marker;
        *req_cls = &marker;
        return MHD_YES;
    }
    if (*upload_data_size) { /* a body is ignored, never stored */
        *upload_data_size = 0;
        return MHD_YES;
    }
    double t0 = now_s();
    if (h->token) {
        const char *auth = h->M->MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
        if (!auth || !same_secret(auth, h->token))
            return reply(h, c, MHD_HTTP_UNAUTHORIZED, "text/plain; charset=utf-8", page_401,
                         strlen(page_401), 0);
    }
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return reply(h, c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", page_405,
                     strlen(page_405), 0);
    if (!strcmp(url, "/"))
        return reply(h, c, MHD_HTTP_OK, "text/html; charset=utf-8", page_index, strlen(page_index),
                     0);
    if (strcmp(url, "/metrics") != 0)
        return reply(h, c, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8", page_404,
                     strlen(page_404), 0);
    char *text = NULL;
    size_t len = 0;
    double prev = h->last_scrape_s; /* handled by the one polling thread: no race */
    if (erg_exporter_render(h->exporter, prev, &text, &len) != ERG_OK)
        return reply(h, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8", page_500,
                     strlen(page_500), 0);
    enum MHD_Result r =
        reply(h, c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", text, len, 1);
    h->last_scrape_s = now_s() - t0;
    return r;
}

int erg_http_is_loopback(const char *addr)
{
    if (!addr)
        return 0;
    if (!strncmp(addr, "127.", 4) || !strncmp(addr, "[::1]", 5) || !strncmp(addr, "localhost:", 10))
        return 1;
    return 0;
}

/* "HOST:PORT" / "[V6]:PORT" into a sockaddr */
static int parse_listen(const char *text, struct sockaddr_storage *ss, socklen_t *sl)
{
    char host[128];
    const char *port_s;
    if (text[0] == '[') {
        const char *rb = strchr(text, ']');
        if (!rb || rb[1] != ':' || (size_t)(rb - text - 1) >= sizeof host)
            return -1;
        snprintf(host, sizeof host, "%.*s", (int)(rb - text - 1), text + 1);
        port_s = rb + 2;
    } else {
        const char *colon = strrchr(text, ':');
        if (!colon || (size_t)(colon - text) >= sizeof host)
            return -1;
        snprintf(host, sizeof host, "%.*s", (int)(colon - text), text);
        port_s = colon + 1;
    }
    char *end;
    errno = 0;
    unsigned long port = strtoul(port_s, &end, 10);
    if (!*port_s || *end || errno || port > 65535)
        return -1;
    if (!strcmp(host, "localhost"))
        snprintf(host, sizeof host, "127.0.0.1");
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        *sl = sizeof *v4;
        return 0;
    }
    if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        *sl = sizeof *v6;
        return 0;
    }
    return -1;
}

int erg_http_is_address(const char *addr)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    return addr && parse_listen(addr, &ss, &sl) == 0;
}

int erg_http_start(erg_exporter *e, const char *addr, const char *bearer_token, erg_http **out,
                   erg_diag *diag)
{
    if (!e || !addr || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no exporter, address or output");
    *out = NULL;
    int rc = erg__dynlib_load(&mhd_lib, mhd_bind, &mhd_fns, diag);
    if (rc != ERG_OK)
        return rc;
    struct sockaddr_storage ss;
    socklen_t sl;
    if (parse_listen(addr, &ss, &sl) != 0)
        return erg_diag_set(diag, ERG_EINVAL, addr,
                            "not a listen address (expected HOST:PORT with a numeric IPv4 "
                            "address, [IPv6]:PORT or localhost:PORT)");
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return erg_diag_set(diag, ERG_EIO, addr, "socket: %s", strerror(errno));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ss.ss_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&ss, sl) != 0) {
        int err = errno;
        close(fd);
        if (err == EADDRINUSE)
            return erg_diag_set(diag, ERG_EBUSY, addr,
                                "the address is in use (another erg serve or exporter listens "
                                "there; pick another port with --listen)");
        if (err == EACCES)
            return erg_diag_set(diag, ERG_EACCES, addr,
                                "permission denied (ports below 1024 need privilege; use a "
                                "higher port)");
        if (err == EADDRNOTAVAIL)
            return erg_diag_set(diag, ERG_EINVAL, addr,
                                "no interface of this machine has that address");
        return erg_diag_set(diag, ERG_EIO, addr, "bind: %s", strerror(err));
    }
    if (listen(fd, 128) != 0) {
        close(fd);
        return erg_diag_set(diag, ERG_EIO, addr, "listen: %s", strerror(errno));
    }
    erg_http *h = calloc(1, sizeof *h);
    if (!h) {
        close(fd);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    h->M = &mhd_fns;
    h->exporter = e;
    h->fd = fd;
    h->last_scrape_s = NAN;
    if (bearer_token) {
        size_t n = strlen(bearer_token) + 8;
        h->token = malloc(n);
        if (!h->token) {
            close(fd);
            free(h);
            return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        }
        snprintf(h->token, n, "Bearer %s", bearer_token);
    }
    struct sockaddr_storage bound;
    socklen_t bl = sizeof bound;
    if (getsockname(fd, (struct sockaddr *)&bound, &bl) == 0)
        h->port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                    : ((struct sockaddr_in *)&bound)->sin_port);
    h->daemon =
        h->M->MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, NULL, NULL,
                               handle, h, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT,
                               (unsigned)256, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
                               MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768, MHD_OPTION_END);
    if (!h->daemon) {
        close(fd);
        free(h->token);
        free(h);
        return erg_diag_set(diag, ERG_EIO, addr, "the HTTP daemon did not start");
    }
    *out = h;
    return ERG_OK;
}

unsigned erg_http_port(const erg_http *h)
{
    return h ? h->port : 0;
}

void erg_http_stop(erg_http *h)
{
    if (!h)
        return;
    if (h->daemon)
        h->M->MHD_stop_daemon(h->daemon); /* closes the listening socket it was given */
    if (h->token) {
        volatile char *p = h->token; /* do not leave the secret in freed memory */
        while (*p)
            *p++ = 0;
        free(h->token);
    }
    free(h);
}
