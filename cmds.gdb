set pagination off
target remote | /work/main/target/release/dgad vgdb --pid=23347
break TestCase_src.c:5
break TestCase_src.c:7
continue
print &a
monitor set 0x0 3.0
print &b
monitor set $2 4.0
continue
print c
print &c
monitor get $3
continue
