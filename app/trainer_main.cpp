// ringmaster-trainer: one data-parallel rank (see core/trainer/trainer.h).
#include "trainer/trainer.h"

int main(int argc, char** argv)
{
    return ringmaster::trainer::trainerMain(argc, argv);
}
