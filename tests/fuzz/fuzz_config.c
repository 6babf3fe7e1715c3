/* fuzz_config.c — the config file parser (`name = value` lines) on arbitrary bytes,
 * through cfg_load with --config pointing at an in-memory file. Invariants: it
 * either loads with every setting in range or fails with a message. */
#include "core/config.h"
#include "fuzz.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("cfg", 0);
    if (fd < 0)
        return 0;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    char *argv[] = {"--config", path};
    cfg_t cfg;
    bool help;
    char err[512] = "";
    int rc = cfg_load(&cfg, 2, argv, &help, err, sizeof(err));
    if (rc == 0) {
        FUZZ_CHECK(cfg.workers >= 1 && cfg.threads >= 1 && cfg.rate_limit >= 0);
        FUZZ_CHECK(cfg.provider_timeout > 0 && cfg.max_body >= 1024);
        FUZZ_CHECK(strchr(cfg.listen, ':') != NULL);
    } else {
        FUZZ_CHECK(err[0] != '\0');
    }
    cfg_free(&cfg);
    close(fd);
    return 0;
}
