/* Plugin B for dlopen_plugins.c; same shape as plugin_a.c, other constants. */
long plugin_value(long n)
{
    long acc = 0;
    for (long i = 0; i < n; i++)
        acc += i * 5 + 2;
    return acc + 2000;
}

const char *plugin_name(void) { return "plugin-B"; }
