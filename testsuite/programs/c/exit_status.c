/* Returning 7 from main: the exit status must survive the translator. */
#include <stdio.h>

int main(void)
{
    printf("returning 7 from main\n");
    printf("END exit_status\n");
    return 7;
}
