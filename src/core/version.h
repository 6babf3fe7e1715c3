/* version.h — inkwell's version: /metrics (inkwell_build_info), the Debian package
 * (debian/changelog carries the same number; tests/pkg/test_deb.sh compares them). */
#ifndef INK_VERSION_H
#define INK_VERSION_H

#define INKWELL_VERSION "1.1.0"

#endif
