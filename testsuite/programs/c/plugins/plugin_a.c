/* Plugin A for dlopen_plugins.c; plugin_b.c has the same shape with other
 * constants, so both libraries lay out their code identically. */
long plugin_value(long n)
{
    long acc = 0;
    for (long i = 0; i < n; i++)
        acc += i * 3 + 1;
    return acc + 1000;
}

const char *plugin_name(void) { return "plugin-A"; }
