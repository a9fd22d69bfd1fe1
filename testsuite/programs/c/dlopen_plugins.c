/* Usage: dlopen_plugins PLUGIN_A.so PLUGIN_B.so
 *
 * Both plugins export plugin_value() with the same code layout and different
 * constants. After dlclose(A), B is usually mapped at A's old address, so a
 * translator that keeps A's translated code after the unmap would return A's
 * value from B. The sequence A, B, A checks both directions. */
#include <dlfcn.h>
#include <stdio.h>

typedef long (*value_fn)(long);

static int use_plugin(const char *path, const char *label)
{
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        printf("%s: dlopen failed\n", label);
        return 1;
    }
    value_fn f = (value_fn)dlsym(handle, "plugin_value");
    const char *(*name)(void) = (const char *(*)(void))dlsym(handle, "plugin_name");
    if (!f || !name) {
        printf("%s: dlsym failed\n", label);
        return 1;
    }
    printf("%s: plugin_name()=%s plugin_value(10)=%ld plugin_value(1000)=%ld\n", label, name(), f(10),
           f(1000));
    dlclose(handle);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s PLUGIN_A.so PLUGIN_B.so\n", argv[0]);
        return 2;
    }
    if (use_plugin(argv[1], "first load of A") || use_plugin(argv[2], "load of B after closing A") ||
        use_plugin(argv[1], "reload of A after closing B"))
        return 1;
    printf("END dlopen_plugins\n");
    return 0;
}
