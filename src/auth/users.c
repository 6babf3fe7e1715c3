/* users.c — see users.h. */
#include "auth/users.h"

#include <ctype.h>
#include <string.h>

bool users_period_parse(const char *s, char out[8])
{
    if (!s || strlen(s) != 7 || s[4] != '-')
        return false;
    for (int i = 0; i < 7; i++)
        if (i != 4 && !isdigit((unsigned char)s[i]))
            return false;
    int year = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
    int month = (s[5] - '0') * 10 + (s[6] - '0');
    if (year < 1970 || month < 1 || month > 12)
        return false;
    memcpy(out, s, 8);
    return true;
}
